"""The channels customers write from, each a route that receives (signature checked first) and a
way to deliver the outbox's rows: a generic signed webhook, Chatwoot's agent bot, LINE."""
