"""What happens later reaches the conversation: a change a conversation's turn queued for
approval, once a person decides it (`agent approvals approve|deny`), becomes a desk message in
that conversation, in the customer's language and free of operator words (ids, rule names,
reasons typed at the queue), and the conversation stops awaiting approval when nothing else of
it waits. The message is the record a channel delivers from (issue 53's outbox)."""

from __future__ import annotations

from agent_cli.policy.language import language_of
from agent_cli.store import conversations as stored
from agent_cli.store.approval_items import Approval
from agent_cli.store.sqlite import OrderStore

_TOLD = {
    "en": {
        "approved": "An update on your request: the change you confirmed has been approved and "
        "made.",
        "denied": "An update on your request: the change you confirmed was not approved, so "
        "nothing was changed. Reply here if there is anything else I can do.",
        "failed": "An update on your request: the change you confirmed could not be made after "
        "all, so nothing was changed. Reply here and I will look at it again.",
    },
    "ja": {
        "approved": "ご依頼の件のお知らせです。ご確認いただいた変更は承認され、完了しました。",
        "denied": "ご依頼の件のお知らせです。ご確認いただいた変更は承認されなかったため、"
        "何も変更していません。ほかにご用件があれば、こちらにご返信ください。",
        "failed": "ご依頼の件のお知らせです。ご確認いただいた変更は実行できなかったため、"
        "何も変更していません。こちらにご返信いただければ、改めて確認いたします。",
    },
}


def tell_decision(store: OrderStore, item: Approval) -> stored.Conversation | None:
    """Tell the conversation whose turn queued `item` what became of it; the conversation
    (None when the item came from no stored conversation, or it is closed)."""
    conversation = stored.of_run(store, item.run_id)
    if conversation is None or conversation.status == "closed":
        return None
    their_messages = [
        m.text for m in stored.messages(store, conversation.id) if m.role == "customer"
    ]
    words = _TOLD[
        "ja" if language_of(" ".join([item.question, *their_messages[-3:]])) == "ja" else "en"
    ]
    text = words.get(item.status)
    if text is None:  # still pending, or expired: nothing decided to tell
        return None
    stored.add_message(store, conversation.id, "desk", "notice", text)
    if conversation.status == "awaiting_approval" and not stored.awaits_approval(
        store, conversation.id
    ):
        stored.set_status(store, conversation.id, "open")
    return conversation
