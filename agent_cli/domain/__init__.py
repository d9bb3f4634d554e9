"""The retail desk's pure model: what it knows without a store, a model or a screen (the intent
table today). Imports only `core/` and the shared base."""
