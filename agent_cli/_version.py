"""The version, in a module of its own: the package root (the public API) imports the runtime,
and the modules that name the version (the User-Agent, `agent --version`) must not import that."""

__version__ = "0.1.0"
