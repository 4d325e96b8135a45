"""Compiling insights into typed proposals: the compiler table's row shapes, Python
compilers a project names, and the StrategyCompiler that applies them.
"""

__all__ = [
    "compilers",
    "entry",
    "table",
]
