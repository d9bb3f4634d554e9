"""One run assembled and driven: options -> settings -> model -> tools -> store -> limits
(`assemble.py`), events handed to their sinks and questions to who answers them (`drive.py`,
`answerers.py`)."""
