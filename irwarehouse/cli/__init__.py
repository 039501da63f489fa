"""The ``irw`` command line: ``app`` is the console entry point (``irw = irwarehouse.cli:app``).

Each module registers its commands on the shared application in ``app.py``.
"""

from . import core  # noqa: F401  (registers the commands)
from . import pools  # noqa: F401
from . import stats  # noqa: F401
from . import experiments  # noqa: F401
from . import standardize  # noqa: F401
from . import export  # noqa: F401
from .app import app

__all__ = ["app"]
