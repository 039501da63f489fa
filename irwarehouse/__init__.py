"""irwarehouse: an SQL-centric evaluation warehouse for information retrieval experiments."""

__version__ = "0.1.0"
