"""The retail desk's pure model: what it knows without a store, a model or a screen. Its records
(`orders.py`, `records.py`), the plans and rules of its writes (`writes/`, one module per family),
refund eligibility, each order's ledger, money in minor units (`currencies.py`), a
conversation's consent, the tool catalogue, the writes' names and the intent table. Imports only
`core/` and the shared base; `store/` persists these records."""
