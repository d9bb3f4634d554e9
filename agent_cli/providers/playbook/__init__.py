"""The offline playbook model, in its own house: `model.py` decides each step (routed by the
turn's intent, `turn.py`), the flows it runs (`desk.py`: where is my order, where is my refund,
a hand-over; `who.py`: who the customer is, their orders; `writes.py`: the changes, put to the
customer in their words by `shown.py`), what it reads in the customer's words (`reading.py`,
`typos.py`, `parts.py`) and what it says when it did not understand (`unsure.py`)."""

from agent_cli.providers.playbook.model import ONLY_ENGLISH_AND_JAPANESE, PlaybookModel

__all__ = ["ONLY_ENGLISH_AND_JAPANESE", "PlaybookModel"]
