"""The order store: persistence only. One contract (`sqlite.OrderStore`), two backends
(`sqlite.py`, `postgres.py`), their schema and migrations, reads of the desk's records and the
commit of a planned write (the records and the rules are `domain/`'s), order files and
store-to-store copies, and the approval queue's table."""
