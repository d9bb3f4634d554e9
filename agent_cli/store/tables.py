"""The store's tables, one text for both backends (SQLite and PostgreSQL read the same DDL here):
the seed's refunds and approval queue, and the desk's:
customers and their payment methods, products and their variants, an order's items, shipments
and their events, and an order's payments and refunds as a history.

Ids are kept exactly as given (`sara_doe_496`, `#W2378156`, `credit_card_0000000`); money is
BIGINT minor units in the currency named beside it; a list or a mapping that is only ever read
whole (a variant's options, a shipment's tracking numbers) is JSON text. Rows that belong to a
list carry their `position`, so a list reads back in the order it was written (and a τ²-bench
file exported reads in the order it was imported).
"""

from __future__ import annotations

from agent_cli.domain.orders import STATUSES

# The order statuses a check constraint allows, as SQL (the seed's five and the desk's three).
STATUS_CHECK = f"CHECK (status IN ({', '.join(repr(s) for s in STATUSES)}))"

# The columns the desk adds to `orders` (the seed's columns are kept as they are).
ORDER_COLUMNS = (
    "position INTEGER",  # where an imported order stood in its file (exports keep the order)
    "customer_id TEXT",
    "address1 TEXT",
    "address2 TEXT",
    "city TEXT",
    "state TEXT",
    "country TEXT",
    "zip TEXT",
    "placed_at TEXT",
    "cancel_reason TEXT",
    "exchange_request TEXT",  # JSON: items, new_items, payment_method_id, price_difference
    "return_request TEXT",  # JSON: items, payment_method_id
)

TABLES = (
    """CREATE TABLE customers (
        id TEXT PRIMARY KEY,
        position INTEGER NOT NULL,
        first_name TEXT NOT NULL,
        last_name TEXT NOT NULL,
        email TEXT NOT NULL,
        address1 TEXT NOT NULL,
        address2 TEXT NOT NULL,
        city TEXT NOT NULL,
        state TEXT NOT NULL,
        country TEXT NOT NULL,
        zip TEXT NOT NULL
    )""",
    "CREATE INDEX customers_by_email ON customers (email)",
    "CREATE INDEX customers_by_zip ON customers (zip)",
    """CREATE TABLE payment_methods (
        customer_id TEXT NOT NULL,
        id TEXT NOT NULL,
        position INTEGER NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('credit_card', 'paypal', 'gift_card')),
        brand TEXT,
        last_four TEXT,
        balance BIGINT,
        currency TEXT NOT NULL,
        PRIMARY KEY (customer_id, id)
    )""",
    """CREATE TABLE products (
        id TEXT PRIMARY KEY,
        position INTEGER NOT NULL,
        name TEXT NOT NULL
    )""",
    """CREATE TABLE variants (
        product_id TEXT NOT NULL,
        id TEXT NOT NULL,
        position INTEGER NOT NULL,
        options TEXT NOT NULL,
        available BOOLEAN NOT NULL,
        price BIGINT NOT NULL CHECK (price >= 0),
        currency TEXT NOT NULL,
        PRIMARY KEY (product_id, id)
    )""",
    "CREATE INDEX variants_by_id ON variants (id)",
    """CREATE TABLE order_items (
        order_code TEXT NOT NULL,
        position INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        product_id TEXT NOT NULL,
        name TEXT NOT NULL,
        price BIGINT NOT NULL CHECK (price >= 0),
        options TEXT NOT NULL,
        PRIMARY KEY (order_code, position)
    )""",
    """CREATE TABLE shipments (
        order_code TEXT NOT NULL,
        position INTEGER NOT NULL,
        tracking_ids TEXT NOT NULL,
        item_ids TEXT NOT NULL,
        carrier TEXT,
        estimated_delivery TEXT,
        PRIMARY KEY (order_code, position)
    )""",
    """CREATE TABLE shipment_events (
        order_code TEXT NOT NULL,
        shipment INTEGER NOT NULL,
        position INTEGER NOT NULL,
        happened_at TEXT NOT NULL,
        place TEXT NOT NULL,
        description TEXT NOT NULL,
        PRIMARY KEY (order_code, shipment, position)
    )""",
    """CREATE TABLE payments (
        order_code TEXT NOT NULL,
        position INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('payment', 'refund')),
        amount BIGINT NOT NULL CHECK (amount >= 0),
        payment_method_id TEXT NOT NULL,
        paid_at TEXT,
        PRIMARY KEY (order_code, position)
    )""",
    "CREATE INDEX orders_by_customer ON orders (customer_id)",
)

# Emptied by `orders import --format tau2 --replace`, children first (the seed's refunds and the
# approval queue stay: they are a record of what happened, not desk data).
DESK_TABLES = (
    "shipment_events",
    "shipments",
    "payments",
    "order_items",
    "variants",
    "products",
    "payment_methods",
    "customers",
)


def tickets_table(id_column: str) -> str:
    """The tickets table, its id column as the backend writes one."""
    return f"""CREATE TABLE tickets (
            id {id_column},
            status TEXT NOT NULL DEFAULT 'open'
                CHECK (status IN ('open', 'claimed', 'closed')),
            customer_id TEXT,
            order_code TEXT,
            summary TEXT NOT NULL,
            question TEXT NOT NULL,
            run_id TEXT NOT NULL,
            opened_at TEXT NOT NULL,
            claimed_by TEXT,
            claimed_at TEXT,
            closed_by TEXT,
            closed_at TEXT,
            note TEXT
        )"""


CONVERSATION_STATUSES = ("open", "awaiting_customer", "awaiting_approval", "handed_over", "closed")

# A conversation kept in the store (conversations.py), so any process answers its next message:
# who it is with, where it stands, the desk's memory of it (`state`: who was identified, what
# was proposed and consented), and the lease a process holds while it answers a message.
CONVERSATIONS_TABLE = f"""CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        channel TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open'
            CHECK (status IN ({", ".join(repr(s) for s in CONVERSATION_STATUSES)})),
        customer_id TEXT,
        asserted_by TEXT,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        closed_by TEXT,
        lease_owner TEXT,
        lease_until TEXT
    )"""


def conversation_messages_table(id_column: str) -> str:
    """Every message of a conversation, in order: the customer's (with the caller's message id,
    `message_key`, and the turn's outcome once answered, `reply`), the desk's and a person's."""
    return f"""CREATE TABLE conversation_messages (
            id {id_column},
            conversation_id TEXT NOT NULL REFERENCES conversations (id),
            role TEXT NOT NULL CHECK (role IN ('customer', 'desk', 'staff')),
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            at TEXT NOT NULL,
            run_id TEXT,
            message_key TEXT,
            reply TEXT
        )"""


CONVERSATION_INDEXES = (
    "CREATE INDEX conversations_by_status ON conversations (status, updated_at)",
    "CREATE INDEX conversation_messages_in_order ON conversation_messages (conversation_id, id)",
    "CREATE UNIQUE INDEX conversation_messages_by_key"
    " ON conversation_messages (conversation_id, message_key)",
)


# Where a channel reaches a conversation's customer (issue 53): the channel's own id of the
# conversation (`external_id`, one per channel) and its address (JSON, e.g. a Chatwoot account and
# conversation, a LINE user); a conversation with an address has its desk's and a person's
# messages delivered through the outbox.
CONVERSATION_ADDRESS = (
    "ALTER TABLE conversations ADD COLUMN external_id TEXT",
    "ALTER TABLE conversations ADD COLUMN address TEXT",
    "CREATE UNIQUE INDEX conversations_by_channel_id ON conversations (channel, external_id)",
)

# The API token that opened a conversation (`token:NAME`): a customer-scope token, such as the web
# chat's public one, speaks only in the conversations it opened.
CONVERSATION_OPENER = ("ALTER TABLE conversations ADD COLUMN opened_by TEXT",)

# The approval queue's columns named for any item, not a refund's (a later migration, so a
# store of every earlier version keeps its rows): `kind` the tool (issue_refund or a desk
# write), `key` the item's idempotency key (a refund's, or a write's call), `summary` a refund's
# reason or a write's change in words.
APPROVAL_COLUMNS_NAMED = (
    "ALTER TABLE approvals RENAME COLUMN tool TO kind",
    "ALTER TABLE approvals RENAME COLUMN refund_key TO key",
    "ALTER TABLE approvals RENAME COLUMN reason TO summary",
)

OUTBOX_KINDS = ("message", "handover")
OUTBOX_STATUSES = ("pending", "sent", "failed")


def outbox_table(id_column: str) -> str:
    """What the serving processes owe a channel (outbox.py): a message to deliver or a
    hand-over to announce, written in the transaction that made it, claimed by one process at a
    time, retried with backoff, sent once (`key`: the idempotency key a channel is sent)."""
    return f"""CREATE TABLE outbox (
            id {id_column},
            conversation_id TEXT NOT NULL REFERENCES conversations (id),
            message_id BIGINT REFERENCES conversation_messages (id),
            kind TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in OUTBOX_KINDS)})),
            key TEXT NOT NULL UNIQUE,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ({", ".join(repr(s) for s in OUTBOX_STATUSES)})),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at TEXT NOT NULL,
            claimed_by TEXT,
            claimed_until TEXT,
            last_error TEXT,
            created_at TEXT NOT NULL,
            sent_at TEXT
        )"""


OUTBOX_INDEXES = (
    "CREATE INDEX outbox_due ON outbox (status, next_at)",
    "CREATE INDEX outbox_of_conversation ON outbox (conversation_id, id)",
)


TOKEN_SCOPES = ("customer", "identify", "staff")

# `agent serve`'s bearer tokens (tokens.py): a name, what it may do, and only a digest of the
# token itself (shown once, when made).
TOKENS_TABLE = f"""CREATE TABLE api_tokens (
        name TEXT PRIMARY KEY,
        scope TEXT NOT NULL CHECK (scope IN ({", ".join(repr(s) for s in TOKEN_SCOPES)})),
        digest TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        revoked_at TEXT,
        revoked_by TEXT
    )"""


ARTICLES_TABLE = """CREATE TABLE articles (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        words TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )"""  # the help centre (help_articles.py): `words` is what full-text search reads


def order_changes_table(id_column: str) -> str:
    """What the desk's writes changed, one row per committed write (write_commits.py): an
    order's history beside its payments, and what `agent logs show` and `orders show` tell."""
    return f"""CREATE TABLE order_changes (
            id {id_column},
            order_code TEXT,
            customer_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            summary TEXT NOT NULL,
            amount BIGINT NOT NULL CHECK (amount >= 0),
            currency TEXT,
            made_by TEXT NOT NULL,
            run_id TEXT NOT NULL,
            made_at TEXT NOT NULL
        )"""


def refunds_table(id_column: str) -> str:
    """The refunds table, its id column as the backend writes one (shared with postgres.py);
    BIGINT amounts: PostgreSQL's INTEGER stops at 2**31, SQLite's is 64 bits either way."""
    return f"""CREATE TABLE refunds (
            id {id_column},
            order_code TEXT NOT NULL,
            amount BIGINT NOT NULL CHECK (amount > 0),
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL,
            idempotency_key TEXT NOT NULL UNIQUE
        )"""


def approvals_table(id_column: str, name: str = "approvals") -> str:
    """The approval queue's table (approval_queue.py) as it was first made, for the refunds
    alone: `APPROVAL_COLUMNS_NAMED` below renames its refund columns to what they hold for any
    kind of item. An item is a refund (an order, an amount above 0) or a desk write (no order
    for a customer's own address, an amount of 0 for a change that moves no money)."""
    return f"""CREATE TABLE {name} (
            id {id_column},
            tool TEXT NOT NULL,
            order_code TEXT,
            amount BIGINT NOT NULL CHECK (amount >= 0),
            reason TEXT NOT NULL,
            refund_key TEXT NOT NULL,
            judged TEXT NOT NULL,
            run_id TEXT NOT NULL,
            question TEXT NOT NULL,
            proposed_by TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'failed')),
            decided_by TEXT,
            decided_at TEXT,
            outcome TEXT,
            refund_id BIGINT
        )"""


def shop_rules_table(id_column: str) -> str:
    """The shop's rules pushed to a team's store (shop_rules.py): each push a new version, the
    newest in force (its id is the version); the sections as JSON, read back through the
    settings' own validation."""
    return f"""CREATE TABLE shop_rules (
            id {id_column},
            body TEXT NOT NULL,
            pushed_by TEXT NOT NULL,
            pushed_at TEXT NOT NULL
        )"""


# A team's run log on PostgreSQL (record/team_log.py): the SQLite log's tables (record/runlog.py),
# without its full-text index.
RUN_LOG_TABLES = (
    """CREATE TABLE runs (
            id BIGSERIAL PRIMARY KEY,
            run_id TEXT NOT NULL UNIQUE,
            session_id TEXT,
            kind TEXT NOT NULL,
            started_at TEXT NOT NULL,
            question TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            status TEXT NOT NULL,
            answer TEXT,
            steps INTEGER NOT NULL DEFAULT 0,
            input_tokens BIGINT NOT NULL DEFAULT 0,
            output_tokens BIGINT NOT NULL DEFAULT 0,
            cost DOUBLE PRECISION,
            elapsed_ms DOUBLE PRECISION,
            trace TEXT NOT NULL DEFAULT '',
            intent TEXT,
            proposed INTEGER NOT NULL DEFAULT 0,
            approved INTEGER NOT NULL DEFAULT 0,
            denied INTEGER NOT NULL DEFAULT 0,
            queued INTEGER NOT NULL DEFAULT 0,
            refused INTEGER NOT NULL DEFAULT 0
        )""",
    "CREATE INDEX runs_by_start ON runs (started_at)",
    "CREATE INDEX runs_by_session ON runs (session_id, id)",
    "CREATE TABLE traces (id BIGINT PRIMARY KEY REFERENCES runs (id), lines TEXT NOT NULL)",
)
