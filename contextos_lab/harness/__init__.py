"""The Harness seam, the bundled reference harness, and the subprocess harness."""
