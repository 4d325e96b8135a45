"""A harness that is a program in any language: its environment, its result lines, its stderr,
and the long-lived (persistent) processes that answer batch after batch."""
