"""irwarehouse: an SQL-centric evaluation warehouse for information retrieval experiments.

The Python API is :class:`irwarehouse.Warehouse` (``from irwarehouse import Warehouse``).
"""

from .version import __version__

__all__ = ["Warehouse", "__version__"]


def __getattr__(name):  # the API is imported on first use: the command line stays light
    if name == "Warehouse":
        from .api import Warehouse

        return Warehouse
    raise AttributeError(f"module 'irwarehouse' has no attribute {name!r}")
