"""What the offline playbook says to customers, English and Japanese, in one place (issue 49:
one catalogue): each flow's words, keyed by its name; the flows (desk.py, shown.py, unsure.py,
who.py, writes.py, model.py) give them their shape and fill them from the records."""

# ruff: noqa: E501 - sentences, kept whole where they fit as they were written (one per key)
from __future__ import annotations

from typing import Any

DESK_EN: dict[str, Any] = {
    "moving": "Order {code} is on its way with {carrier} (tracking number {tracking}).",
    "moving_unnamed": "Order {code} is on its way (tracking number {tracking}).",
    "last_event": " Latest update, {at}: {description} ({place}).",
    "eta": " Estimated delivery: {eta}.",
    "not_shipped": "Order {code} has not shipped yet (status {status}); it has no tracking number.",
    "delivered": "Order {code} was delivered on {date} (status {status}).",
    "cancelled": "Order {code} was cancelled, so it will not ship.",
    "not_yours": "I could not find order {code} on your account; please check the order code.",
    "handed_over": "I have passed this to a person on our team. So that a colleague can reach you, "
    "please reply with your email address.",
    "handed_over_here": "I have passed this to a person on our team: a colleague will answer you "
    "here, usually within 1 business day.",
    "handed_over_email": "I have passed this to a person on our team: a colleague will follow up "
    "with you by email within 1 business day.",
    "would_hand_over": "This needs a person on our team; in this dry run no ticket was opened.",
    "refunded": "Order {code}: {refunded} has been refunded so far; {left} of its {total} total "
    "is left to refund. Refunds to a card or PayPal take 5-7 business days to show.",
    "not_refunded": "Order {code} has had no refund yet; its total is {total}.",
    "about": "About order {code}: ",
    "which_refund": "Which order is the refund for? With its code I can check what has been "
    "refunded and what is left.",
}

SHOWN_EN: dict[str, Any] = {
    "ask": "Here is the change ({id}): {shown}. Shall I go ahead? Please answer yes or no.",
    "cancel": "cancel order {code}; {amount} goes back the way it was paid",
    "address": "send order {code} to {address}",
    "account": "make {address} your account's address (orders placed keep theirs)",
    "payment": "pay for order {code} with your {method}",
    "swap": "change the {name} in order {code}: {changes}; {price}",
    "exchange": "exchange the {name} from order {code}: {changes}; {price}",
    "ret": "return the {names} from order {code}; {amount} goes back the way it was paid",
    "change": "{key} {old} to {new}",
    "added": "{key} {new}",
    "none": "none",
    "joiner": ", and ",
    "same_price": "the same price",
    "more": "{amount} more to pay",
    "less": "{amount} back to you",
    "methods": {"gift_card": "gift card", "paypal": "PayPal", "credit_card": "credit card"},
    "japanese": False,
}

UNSURE_EN: dict[str, Any] = {
    "unsure": "I'm not sure what you would like me to do. I can {can}. What would you like?",
    "not_in_help": "I could not find an answer to that in our help articles. I can {can}, or "
    "pass you to a person on our team. What would you like?",
    "welcome": "Hello, and thank you for writing. I can {can}. How can I help?",
    "state": "Order {code} is {status}. With it I can {can}. What would you like me to do?",
    "no_such_order": "I could not find an order with the code {code}. Please check the code on "
    "your order confirmation.",
    "could_not_read": "I could not read order {code} just now. Please try again in a moment.",
    "joiner": "; ",
    "japanese": False,
}

WHO_EN: dict[str, Any] = {
    "email_please": "To look up your order, what is the email address on your account? (Or your "
    "first and last name and zip code.)",
    "not_found": "I could not find an account with that email address; please check it.",
    "no_email": "I need the email address on your account (or your name and zip code) to look up "
    "your orders.",
    "handed_over": "I could not find your account after several tries, so I have passed your "
    "question to a person; they will follow up with you.",
    "would_hand_over": "I could not find your account after several tries; a person would follow "
    "up with you (this was a dry run: no ticket was opened).",
    "orders": "These are the orders on your account:\n{lines}\nWhich one is your question about?",
    "no_orders": "There are no orders on your account.",
    "order_line": "- {code}: {status} ({items})",
    "joiner": "\n",
}

WRITES_EN: dict[str, Any] = {
    "confirm": "Here is the change, exactly: {summary}. Shall I go ahead? Please answer yes or no.",
    "plainly": "To be sure: shall I make change {id} ({summary})? Please answer yes or no.",
    "not_changed": "All right: I have not changed anything on {what}.",
    "refused": "I can't make that change to {what}: {rule}. Nothing was changed.",
    "changed": "Done (change #{number}): {summary}.",
    "queued": "Your change is waiting for a person's approval (#{number}); nothing is changed "
    "yet: {summary}.",
    "dry_run": "This is a dry run, so nothing was changed; the change would be: {summary}.",
    "denied": "The change to {what} was not made: {reason}. Nothing was changed.",
    "address_please": "What is the new address? Please write it as: street, city, state zip, "
    "country (for example: 4-5-6 Umeda, Kita-ku, Osaka 530-0001, Japan).",
    "which_items": "Which items of order {code} do you mean? It has: {items}.",
    "which_variant": "Which {name} would you like instead? Available: {variants}.",
}

REFUND_EN: dict[str, Any] = {
    "sentences": {
        "refundable": "Order {code} is refundable: delivered {delivered_at}, {days} {day_word} "
        "ago, within the {window}-day window; refund amount {amount}.",
        "wrong_status": "Order {code} is not refundable: its status is {status}; "
        "only {statuses} orders can be refunded.",
        "expired": "Order {code} is not refundable: delivered {delivered_at}, {days} {day_word} "
        "ago, outside the {window}-day window.",
        "no_date": "I cannot tell whether order {code} is refundable: it has no delivery date.",
        "future": "I cannot tell whether order {code} is refundable: its delivery date "
        "{delivered_at} is after today.",
        "not_found": "Order {code} was not found; please check the order code.",
        "failed": "I could not check order {code}: {error}",
    },
    "no_code": "I could not find an order code in your question. Please tell me the order code "
    "(the letters and digits on your order confirmation) and I will check it.{rule}",
    "rule": " Our policy: refunds are accepted within {window} days of delivery, "
    "for {statuses} orders only.",
    "either": " or ",
    "currency_names": {},
    "which_order": "Which order is this about? Please give the order code (for example A100).",
    "did_you_mean": "I could not find that order code. Did you mean {codes}?",
    "no_such_code": "I could not find an order with the code {codes}. Which order is this about? "
    "Please give the code as it is written on your order confirmation.",
    "or_": " or ",
    "capped": " This desk refunds at most {cap} at a time; more needs a supervisor.",
    "offer_return": " If you would like, I can start the return that sends the money back: tell "
    "me which items, and the email on your account.",
}

DESK_JA: dict[str, Any] = {
    "moving": "注文{code}は{carrier}で配送中です（追跡番号{tracking}）。",
    "moving_unnamed": "注文{code}は配送中です（追跡番号{tracking}）。",
    "last_event": "最新の状況（{at}）：{description}（{place}）。",
    "eta": "お届け予定日は{eta}です。",
    "not_shipped": "注文{code}はまだ発送されていません（ステータス{status}）。追跡番号はありません。",
    "delivered": "注文{code}は{date}にお届け済みです（ステータス{status}）。",
    "cancelled": "注文{code}はキャンセル済みのため、発送されません。",
    "not_yours": "ご登録のアカウントに注文{code}が見つかりませんでした。注文番号をご確認ください。",
    "handed_over": "担当者に引き継ぎました。担当者からご連絡できるよう、メールアドレスをお知らせください。",
    "handed_over_here": "担当者に引き継ぎました。通常1営業日以内に、担当者がこちらでお答えします。",
    "handed_over_email": "担当者に引き継ぎました。担当者から1営業日以内にメールでご連絡いたします。",
    "would_hand_over": "担当者の対応が必要です（ドライランのため、チケットは作成していません）。",
    "refunded": "注文{code}は、これまでに{refunded}が返金済みで、合計{total}のうち{left}が未返金です。"
    "カードやPayPalへの返金は反映まで5〜7営業日かかります。",
    "not_refunded": "注文{code}にはまだ返金がありません（合計{total}）。",
    "about": "注文{code}の件について：",
    "which_refund": "どのご注文の返金でしょうか？注文番号をお知らせいただければ、返金済みの額と残りをお調べします。",
    "japanese": True,
}

SHOWN_JA: dict[str, Any] = {
    "ask": "次の変更（{id}）を行います：{shown}。よろしいですか？「はい」か「いいえ」でお答えください。",
    "cancel": "注文{code}をキャンセルし、{amount}を元のお支払い方法に返金",
    "address": "注文{code}のお届け先を{address}に変更",
    "account": "ご登録住所を{address}に変更（ご注文済みの分はそのまま）",
    "payment": "注文{code}のお支払いを{method}に変更",
    "swap": "注文{code}の{name}を変更（{changes}）、{price}",
    "exchange": "注文{code}の{name}を交換（{changes}）、{price}",
    "ret": "注文{code}の{names}を返品し、{amount}を元のお支払い方法に返金",
    "change": "{key}：{old}→{new}",
    "added": "{key}：{new}",
    "none": "なし",
    "joiner": "、",
    "same_price": "価格は同じ",
    "more": "差額{amount}のお支払い",
    "less": "差額{amount}のご返金",
    "methods": {"gift_card": "ギフトカード", "paypal": "PayPal", "credit_card": "クレジットカード"},
    "japanese": True,
}

UNSURE_JA: dict[str, Any] = {
    "unsure": "ご用件を確かめさせてください。この窓口では、{can}ができます。どれをご希望ですか？",
    "not_in_help": "ヘルプ記事に該当する答えが見つかりませんでした。この窓口では、{can}ができます。"
    "どれをご希望ですか？",
    "welcome": "ご連絡ありがとうございます。この窓口では、{can}ができます。ご用件をお聞かせください。",
    "state": "注文{code}の状態は「{status}」です。この注文では、{can}ができます。どれをご希望ですか？",
    "no_such_order": "注文番号{code}の注文は見つかりませんでした。ご注文確認に記載の番号をご確認ください。",
    "could_not_read": "ただいま注文{code}を確認できませんでした。少し時間をおいてお試しください。",
    "joiner": "・",
    "japanese": True,
}

WHO_JA: dict[str, Any] = {
    "email_please": "ご注文を確認しますので、アカウントのメールアドレス（またはお名前と郵便番号）を"
    "教えてください。",
    "not_found": "そのメールアドレスのアカウントが見つかりませんでした。ご確認ください。",
    "no_email": "ご注文を確認するには、アカウントのメールアドレス（またはお名前と郵便番号）が必要です。",
    "handed_over": "何度か確認してもアカウントが見つからなかったため、担当者に引き継ぎました。"
    "担当者からご連絡いたします。",
    "would_hand_over": "何度か確認してもアカウントが見つかりませんでした。担当者が対応します"
    "（ドライランのため、チケットは作成していません）。",
    "orders": "ご登録のアカウントのご注文は次のとおりです：{lines}。どのご注文についてでしょうか？",
    "no_orders": "ご登録のアカウントにご注文はありません。",
    "order_line": "{code}（{status}、{items}）",
    "joiner": "、",
}

WRITES_JA: dict[str, Any] = {
    "confirm": "次の変更を行います：{summary}。よろしいですか？「はい」か「いいえ」でお答えください。",
    "plainly": "念のため確認します。変更{id}（{summary}）を行ってよろしいですか？「はい」か「いいえ」で"
    "お答えください。",
    "not_changed": "承知しました。{what}は何も変更していません。",
    "refused": "{what}のその変更はできません：{rule}。何も変更していません。",
    "changed": "変更しました（変更番号{number}）：{summary}。",
    "queued": "変更は担当者の承認待ちです（#{number}）。まだ何も変更されていません：{summary}。",
    "dry_run": "ドライランのため何も変更していません。変更内容：{summary}。",
    "denied": "{what}を変更できませんでした：{reason}。何も変更していません。",
    "address_please": "新しい住所を「番地, 市区町村, 都道府県 郵便番号, 国」の形で教えてください"
    "（例：4-5-6 Umeda, Kita-ku, Osaka 530-0001, Japan）。",
    "which_items": "注文{code}のどの商品でしょうか？注文内容：{items}。",
    "which_variant": "{name}はどれに交換しますか？在庫があるもの：{variants}。",
    "your_account": "ご登録情報",
    "japanese": True,
}

REFUND_JA: dict[str, Any] = {
    "sentences": {
        "refundable": "注文{code}は返金可能です：{delivered_at}に配達済み（{days}日前）で、"
        "{window}日間の返金期間内です。返金額は{amount}です。",
        "wrong_status": "注文{code}は返金できません：ステータスが{status}です。"
        "返金できるのは{statuses}の注文のみです。",
        "expired": "注文{code}は返金できません：{delivered_at}に配達済み（{days}日前）で、"
        "{window}日間の返金期間を過ぎています。",
        "no_date": "注文{code}は配達日が記録されていないため、返金可否を判断できません。",
        "future": "注文{code}の配達日（{delivered_at}）が今日より後のため、判断できません。",
        "not_found": "注文{code}は見つかりませんでした。注文番号をご確認ください。",
        "failed": "注文{code}を確認できませんでした：{error}",
    },
    "no_code": "ご質問に注文番号が見つかりませんでした。"
    "注文番号（注文確認に記載の英数字）を教えていただければ確認します。{rule}",
    "rule": "返金ポリシー：配達日から{window}日以内、ステータスが{statuses}の注文のみ返金できます。",
    "either": "または",
    "currency_names": {"JPY": "{total}円"},
    "which_order": "どの注文についてのご質問ですか？注文番号（例：A100）を教えてください。",
    "did_you_mean": "その注文番号は見つかりませんでした。{codes}のことでしょうか？",
    "no_such_code": "注文番号{codes}の注文は見つかりませんでした。どの注文についてのご質問ですか？"
    "ご注文確認メールに記載の注文番号を教えてください。",
    "or_": "または",
    "capped": "この窓口で一度に返金できるのは{cap}までです。それを超える分は担当者が対応します。",
    "offer_return": "ご希望でしたら、返金のための返品手続きをいたします。返品する商品と、ご登録の"
    "メールアドレスをお知らせください。",
}
