"""The order store: one contract (`sqlite.OrderStore`), two backends (`sqlite.py`, `postgres.py`),
their migrations, order files and store-to-store copies, and the approval queue's table."""
