"""The version of irwarehouse (read by the build: pyproject.toml [tool.hatch.version])."""

__version__ = "0.1.0"
