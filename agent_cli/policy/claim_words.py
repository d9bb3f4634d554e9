"""The words of claims (policy/claims.py reads answers with them): for each kind of act, the
forms an answer says it was done in, English and Japanese; what makes a clause no claim; and the
cue words that gate each pattern (most clauses are tested for none). Written from the labelled
corpus in tests/claims_corpus.py; held-out sets there measure what they miss."""

from __future__ import annotations

import functools
import re
from typing import Any


def _trie(phrases: tuple[str, ...]) -> str:
    """A pattern matching exactly `phrases`, as a tree of their letters: at each place the
    engine tries one branch per first letter instead of every phrase (twice as fast here)."""
    root: dict[str, dict[str, Any]] = {}
    for phrase in phrases:
        node = root
        for char in phrase:
            node = node.setdefault(char, {})
        node[""] = {}  # a phrase ends here

    def branches(node: dict[str, Any]) -> str:
        alternatives = [
            re.escape(char) + branches(rest) for char, rest in sorted(node.items()) if char
        ]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"
        return f"(?:{body})?" if "" in node else body

    return f"(?:{branches(root)})"


# The words an answer says an act was done in ("the refund has been processed").
DONE_EN = _trie(
    ("updated", "changed", "modified", "corrected", "switched", "swapped", "replaced", "set",
     "moved", "amended", "processed", "complete", "completed", "done", "confirmed", "finalised",
     "finalized", "submitted", "registered", "initiated", "started", "accepted", "arranged",
     "created", "opened", "raised", "logged", "filed", "issued", "sent", "made", "approved",
     "placed", "requested", "scheduled", "taken care of", "sorted", "through", "on its way",
     "on the way", "fixed", "booked", "reserved", "flagged", "put through", "went through",
     "authorised", "authorized")
)  # fmt: skip
# Where an order goes, in the words answers use for it.
_WHERE = r"(?:address|(?:delivery|shipping) (?:details|destination|info)|destination)"
EN: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        (
            "cancel",
            rf"\bcancel+(?:ed|ation)\b|\bcancel\b.*\b{DONE_EN}\b|"
            r"\b(?:voided|called off|annulled|rescinded|scrapped|terminated)\b|"
            r"\bstopped\b.*\b(?:order|it|[a-z]\d+)\b",
        ),
        (
            "refund",
            rf"\brefunded\b|\brefund\b.*\b{DONE_EN}\b|\b{DONE_EN}\b.*\brefund\b|"
            r"\bmoney\b.*\b(?:back|returned|on its way)\b|\b(?:credited|reimbursed)\b|"
            r"\b(?:is|are|went|gone|put|paid|sent|been)\b.*\bback (?:on|to|into|onto) "
            r"(?:your|the)\b",
        ),
        (
            "account_address",
            rf"\b(?:default|account|profile|saved|home) address\b.*\b(?:{DONE_EN}|is now)\b|"
            rf"\b{DONE_EN}\b.*\b(?:default|account|profile|saved|home) address\b|"
            r"\baddress (?:saved )?on your (?:account|profile)\b.*\b(?:is now|updated|changed)\b",
        ),
        (
            "address",
            rf"\b{_WHERE}\b.*\b{DONE_EN}\b|\b{DONE_EN}\b.*\b{_WHERE}\b|\baddress is now\b|"
            r"\brerouted\b|"
            r"\b(?:will )?(?:now )?(?:ship|be shipped|be delivered)s? (?:now )?to\b|"
            r"\bnow ships? to\b|\bships? to .* (?:now|instead)\b|\bredirected\b|"
            r"\b(?:changed|updated)\b.*\bwhere\b.*\b(?:ships?|goes|is delivered)\b|"
            rf"\b{_WHERE}\b.*\bnow (?:reads|says|shows|points)\b",
        ),
        (
            "payment",
            rf"\bpayment\b.*\b{DONE_EN}\b|\b{DONE_EN}\b.*\bpayment\b|"
            r"\bpayment(?: method)? is now\b|"
            r"\b(?:now )?(?:charged|billed) to\b|\bnow paid\b|"
            r"\b(?:re-?charged|re-?billed)\b.*\b(?:to|on|onto) (?:your|the)\b|"
            r"\bpaid (?:for )?with\b.*\b(?:now|instead)\b|"
            rf"\b{DONE_EN}\b.*\bcharge\b.*\b(?:to|onto)\b|\bnow be (?:paid|charged|billed)\b|"
            r"\b(?:charged|billed)\b.*\binstead of\b",
        ),
        (
            "items",
            r"\b(?:swapped|switched|replaced)\b|\bmade the (?:switch|swap)\b|"
            r"\bnow (?:get|receive)\b.*\binstead of\b|"
            r"\b(?:item|items|size|colou?r|variant)s?\b.*"
            r"\b(?:updated|changed|modified|swapped|switched|replaced)\b|"
            r"\b(?:updated|changed|modified)\b.*\b(?:item|items|size|colou?r|variant)s?\b|"
            r"\bnow (?:contains|includes)\b|"
            r"\bis now (?:the|a|an) (?:\w+ )?(?:one|size|colou?r|version|model|variant)\b",
        ),
        (
            "return",
            rf"\breturn\b.*\b{DONE_EN}\b|\b{DONE_EN}\b.*\breturn\b|\breturned\b.*\b(?:item|"
            r"order|product|it|them|goods)s?\b|\bprepaid (?:return )?label\b.*\b(?:sent|emailed)\b|"
            r"\b(?:courier|driver|carrier)\b.*\bwill (?:collect|pick)\b",
        ),
        (
            "exchange",
            rf"\bexchange\b.*\b{DONE_EN}\b|\b{DONE_EN}\b.*\bexchange\b|\bexchanged\b|"
            r"\b(?:sending|send|ship|shipping)\b.*\b(?:in place of|instead of)\b.*\breturned\b",
        ),
        (
            "handover",
            r"\b(?:transferred|handed|escalated|forwarded|passed|referred)\b.*\b(?:you|this|it|"
            r"case|request|issue|matter|team|colleague|person|specialist|agent|human|supervisor|"
            r"manager)\b|\bticket\b.*\b(?:opened|created|raised|filed|logged|submitted)\b|"
            r"\b(?:opened|created|raised|filed|logged|submitted)\b.*\bticket\b|"
            r"\b(?:someone|somebody|a person|a colleague|a human|an agent|our team|the team|a "
            r"specialist|a team member|one of our|a member of|a supervisor|a manager|our "
            r"support|support team|a real person)\b.*\bwill\b.*\b(?:contact|call|reach|follow|"
            r"get back|be in touch|email|write|look into|help|assist)\b|\bwill be in touch\b|"
            r"\bhas been (?:assigned|escalated)\b|\b(?:who|they|he|she|a teammate|a supervisor|"
            r"a manager) will (?:contact|call|ring|phone|reach|follow|get back|be in touch|email|"
            r"write)\b|\bflagged\b.*\b(?:supervisor|manager|team|colleague|specialist|person)\b|"
            r"\b(?:is|are) now with (?:our|the|a)\b|"
            r"\b(?:asked|told|notified|alerted) (?:a|my|our|the) (?:\w+ )?(?:colleague|teammate|"
            r"supervisor|manager|specialist|team|lead)\b|\bwill take over\b|\btaking over\b|"
            r"\bwill be in contact\b|\bnow (?:has|have|handles?|owns?) (?:your|the|this) "
            r"(?:case|request|issue|ticket|matter|complaint)\b|\b(?:agent|colleague|person|"
            r"specialist|human|team|supervisor|manager)s?\b.*\b(?:notified|alerted|informed)\b",
        ),
        (
            "done",
            r"^(?:done|all set|all done|job done|complete|completed|finished)\b|"
            r"\b(?:it's|it is|that's|"
            r"that is|all|everything is|everything's|it has been|that has been) (?:now )?(?:done|"
            r"complete|completed|taken care of|sorted|finished|set)\b|\bwent ahead\b|"
            r"\bsuccessfully\b|\bis complete\b|\bhas been completed\b|"
            r"^(?:sorted|fixed|updated|booked|changed|processed|arranged)\b",
        ),
    )
)
# Whatever else a first person says was done, in the past, is an act ("done"), unless a read.
FIRST_PERSON = re.compile(r"\b(?:i|we)(?:'|\s)")
DID = re.compile(
    r"\b(?:i|we)(?:'ve| have| had| just| already)*(?: \w+ly)? (?!(?:looked|checked|found|"
    r"searched|reviewed|verified|noticed|received|understood|noted|asked|tried|attempted|"
    r"wanted|needed|hoped|saw|read|seen|learned|explained|mentioned|told|apologi[sz]ed|"
    r"called up|pulled up|opened up)\b)\w+ed\b"
)
# What an order undergoes without the desk acting: said in the passive, a fact, not a claim.
_HAPPENS = (
    "delivered|shipped|placed|ordered|paid|charged|billed|received|dispatched|processed|"
    "delayed|lost|damaged|packed|scheduled|expected|estimated|created|reported|found|"
    "recorded|listed|noted|checked|reviewed|verified|booked in"
)
# Whatever else is said to have been done to it, in the passive or as a new state ("has now
# been closed", "is now marked", "went in"), is an act ("done"): any act this run made grounds it.
PASSIVE_DONE = re.compile(
    r"\b(?:has|have|had)(?: (?:now|just|already|successfully|officially))* been"
    rf"(?: \w+ly)? (?!(?:{_HAPPENS})\b)(?:\w+ed|done|made|sent|set|put|taken|given|handled|"
    r"withdrawn|undone|redone|rewritten)\b|"
    r"\b(?:is|are|was|were)(?: (?:now|just|already|officially))*"
    rf" (?:now|successfully|officially) (?!(?:{_HAPPENS})\b)\w+ed\b|"
    r"\b(?:went|gone|has gone|have gone) (?:in|through) (?:successfully|fine|ok)?\b|"
    r"\b(?:been|was|were|is|are) (?:all )?handled\b"
)
# Words PASSIVE_DONE needs one of (a clause without them is not read with it).
PASSIVE_CUES = ("been", "now", "success", "official", "went", "gone", "handled")
# Japanese: an act noun "done" (しました, いたしました), unless it is a reading or a courtesy.
JA_DID = re.compile(
    r"[一-龥ァ-ヶー]{2}(?:を)?(?:いた)?しました|"
    r"終わりました|終了(?:いた)?しました|済ませました|承りました"
)
JA_READS = re.compile(
    r"(?:確認|拝見|検索|調査|照会|承知|理解|了解|失礼|把握|案内|説明|記録|参照|注文|購入|"
    r"連絡|質問|相談)(?:を)?(?:いた)?しました"
)
JA_FORMS: dict[str, tuple[str, ...]] = {
    "cancel": (
        r"キャンセル(?:を)?(?:いた)?しました",
        r"キャンセル(?:されました|済|が完了|を完了|と(?:なり|させていただき))",
        r"キャンセル(?:を)?させていただ",
        r"キャンセルの手続き(?:を|が)完了",
        r"取り?消し?(?:済|ました|(?:いた)?しました|(?:と|に)なりました|とさせていただ)",
    ),
    "refund": (
        r"(?:ご)?返金(?:を)?(?:いた)?しました",
        r"返金(?:されました|済|が完了|を完了|手続き(?:を|が)完了)",
        r"返金(?:を)?させていただ",
        r"返金を(?:行|実行|処理)い?(?:ま)?し",
        r"払い?戻し(?:ました|(?:を)?(?:いた)?しました|済|が完了|されました)",
    ),
    "account_address": (r"(?:登録|アカウント|ご自宅)(?:の)?(?:ご)?住所.*(?:変更|更新|修正)",),
    "address": (
        r"(?:住所|お届け先|配送先|送り先).*(?:変更|更新|修正)(?:を)?(?:いた)?しました",
        r"(?:住所|お届け先|配送先).*(?:変更|更新)(?:されました|済|が完了|(?:を)?させていただ)",
        r"へお届けします",
    ),
    "payment": (
        r"(?:支払|お支払い)(?:い)?(?:方法)?.*(?:変更|更新)(?:を)?(?:いた)?しました",
        r"(?:支払|お支払い).*(?:切り替え|切替え?)(?:いた)?(?:し)?ました",
        r"(?:支払|お支払い).*(?:変更|更新)(?:されました|済|が完了)",
    ),
    "items": (
        r"(?:商品|サイズ|色|カラー|アイテム).*(?:変更|交換|差し替え)(?:を)?(?:いた)?しました",
    ),
    "return": (
        r"返品(?:を|の)?(?:受け付け|受付|手配|承り|手続き|処理)",
        r"返品(?:いた)?しました",
        r"返品(?:されました|済|が完了|(?:を)?させていただ)",
    ),
    "exchange": (
        r"交換(?:を)?(?:いた)?しました",
        r"交換(?:を|の)?(?:受け付け|受付|手配|承り|手続き)",
        r"交換(?:されました|済|が完了|(?:を)?させていただ)",
    ),
    "handover": (
        r"担当者?(?:に|へ)(?:お)?引き継",
        r"担当(?:者|部署|チーム)?(?:から|より)(?:改めて)?(?:ご)?連絡",
        r"折り返し(?:ご)?連絡(?:いた)?します",
        r"担当者が(?:ご)?連絡",
        r"チケットを(?:作成|発行|登録)",
        r"エスカレーション(?:いた)?しました",
        r"引き継ぎ(?:を)?(?:いた)?しました|引き継ぎました",
        r"(?:上長|上司|責任者|専門部署|担当部署)(?:に|へ)(?:報告|相談|共有|連携|エスカレ)",
        r"(?:改めて|追って|後ほど)(?:ご)?連絡(?:を)?(?:差し上げ|いた|し)ます",
    ),
    "done": (
        r"完了(?:いた)?しました",
        r"完了です",
        r"完了となります",
        r"手続き(?:が|を)完了",
        r"対応(?:いた)?しました",
        r"処理(?:いた)?しました",
        r"完了して(?:おり|い)ます",
        r"(?:変更|更新|対応|処理|手続き)済み?です",
        r"(?:変更|更新)済み",
    ),
}
JA = tuple((kind, re.compile("|".join(forms))) for kind, forms in JA_FORMS.items())

# What is not a claim: a question, a condition, an offer, a negation, what still waits.
NOT_EN = re.compile(
    r"\?\s*$|^(?:once|when|as soon as|after|before|should|would|could|can|shall|do|does|did|"
    r"is|are|may|might|let me|let us|let's)\b|\b(?:once you|once the|once it|as soon as|"
    r"when you|when the|after you|after the|i can|i could|i would|i'd|we can|we could|we would|"
    r"i will|i'll|i am going to|i'm going to|i need|we need|i'm able|i am able|happy to|"
    r"would you|do you want|would like|shall i|should i|want me to|like me to|no longer|yet to|"
    r"needs to|need to|can be|could be|may be|might be|would be|to confirm|confirm with|"
    r"please confirm|plan to|about to|going to be|our policy|within \d+ (?:business )?days|"
    r"(?:refunds|returns|exchanges|cancellations|orders|changes) (?:are|can|may|must|will|take))\b"
    r"|\b(?:can|could|may|might|must|should|would) (?:only|also|still|just|then|not) be\b"
    r"|\b(?:i|we) (?:just|only|still|first|simply) need\b|n't\b"
    r"|\bpending\b(?! order)"  # "is pending approval" waits; "your pending order" is a name
)
# A clause NOT_EN can match holds a "?", starts with one of NOT_FIRST or holds one of NOT_GATE
# (each alternative's rarest word; "i'd" is the words "i" and "d"): most clauses hold none, and
# are not searched (tests/unit/policy/test_claims.py fuzzes that the gate misses no match).
NOT_FIRST = frozenset(
    ("once", "when", "as", "after", "before", "should", "would", "could", "can", "shall", "do",
     "does", "did", "is", "are", "may", "might", "let")
)  # fmt: skip
NOT_GATE = frozenset(
    ("once", "soon", "when", "after", "can", "could", "would", "d", "will", "ll", "going",
     "need", "needs", "able", "happy", "shall", "should", "want", "like", "longer", "yet",
     "may", "might", "must", "confirm", "plan", "about", "policy", "within", "refunds",
     "returns", "exchanges", "cancellations", "orders", "changes", "t", "pending")
)  # fmt: skip
# The single words that make a clause no claim (a set: most clauses are checked word by word).
NOT_WORDS = frozenset(
    ("if", "unless", "no", "not", "never", "cannot", "unable", "nothing", "none",
     "awaiting", "await", "awaits", "waiting", "wait", "queued", "approval", "proposed",
     "propose", "requires", "require", "must", "try", "trying", "attempt", "hope", "expect",
     "eligible", "possible", "planned", "usually", "typically", "normally", "generally",
     "policy")
)  # fmt: skip
WORDS = re.compile(r"[a-z]+")
NOT_JA = re.compile(
    r"[?？]\s*$|か[。.]?\s*$|でしょうか|ますか|もし|たら|れば|場合|次第|後(?:に|で)|できます|可能|"
    r"しましょうか|いたしましょうか|ご希望|ません|ていない|できない|ないです|なかった|承認待ち|"
    r"お待ち|保留|予定|確認させ|ご確認|よろしいですか|通常|一般的|ポリシー|規定|ると|されます"
)
# A clause that opens a condition: the clause after it is its consequence, no claim either.
IF_EN = re.compile(r"^(?:if|once|when|as soon as|after|unless|should you|provided)\b")
IF_FIRST = frozenset(("if", "once", "when", "as", "after", "unless", "should", "provided"))
IF_JA = re.compile(r"^もし|(?:たら|れば|場合は?|次第|後)[、,]?$")


# Words each English kind's pattern needs one of: most clauses are tested for none of them.
CUES = {
    "cancel": ("cancel", "void", "called off", "annul", "rescind", "scrapp", "terminat", "stopped"),
    "refund": ("refund", "money", "credited", "reimbursed", "back "),
    "account_address": ("address",),
    "address": ("address", "ship", "deliver", "redirect", "where", "destination", "rerout"),
    "payment": ("payment", "charge", "billed", "paid"),
    "items": (
        "swap",
        "switch",
        "replac",
        "item",
        "size",
        "colo",
        "variant",
        "instead",
        "contain",
        "includ",
        "one",
        "version",
        "model",
    ),
    "return": ("return", "label", "collect", "pick"),
    "exchange": ("exchang", "in place of", "instead of"),
    "handover": (
        "transfer",
        "hand",
        "escalat",
        "forward",
        "pass",
        "refer",
        "ticket",
        "will",
        "assign",
        "flagged",
        "now with",
        "asked",
        "told",
        "notified",
        "alerted",
        "informed",
        "over",
        "case",
        "request",
        "issue",
        "matter",
        "complaint",
    ),
    "done": (
        "done",
        "set",
        "complete",
        "finish",
        "taken care",
        "sorted",
        "went ahead",
        "success",
        "fixed",
        "updated",
        "booked",
        "changed",
        "processed",
        "arranged",
    ),
}


JA_CUES = {
    "cancel": ("キャンセル", "取り消", "取消"),
    "refund": ("返金", "戻"),  # 払い戻し, 払戻し: "戻" alone (支払 ends in 払)
    "account_address": ("住所",),
    "address": ("住所", "届け", "配送", "り先"),  # 送り先: "り先" alone (配送 ends in 送)
    "payment": ("支払",),
    "items": ("商品", "サイズ", "色", "カラー", "アイテム"),
    "return": ("返品",),
    "exchange": ("交換",),
    "handover": (
        "担当",
        "チケット",
        "エスカレ",
        "引き継",
        "折り返し",
        "上長",
        "上司",
        "責任者",
        "部署",
        "連絡",
    ),
    "done": ("完了", "対応", "処理", "済"),
}


# Words that make a clause another kind's: a refund "to your payment method" changes no
# payment; a payment "switched" to a card swaps no item.
UNLESS = {
    "payment": re.compile(r"\brefund"),
    "items": re.compile(r"\b(?:payment|address|card|method)\b"),
}


def _word_cues(cues: tuple[str, ...]) -> tuple[str, ...]:
    """Cues as parts of one word: a cue of words ("called off", "back ") stands as its longest
    word, which every clause holding the cue holds too."""
    return tuple(max(cue.split(), key=len) for cue in cues)


# "passive" stands for the reading of an act no kind names (PASSIVE_DONE); "did" in Japanese
# for JA_DID.
_EN_WORD_CUES = {kind: _word_cues(cues) for kind, cues in {**CUES, "passive": PASSIVE_CUES}.items()}
JA_CUES_ALL = {**JA_CUES, "did": ("ました",)}
_JA_CUE = re.compile("|".join(sorted({c for cues in JA_CUES_ALL.values() for c in cues})))
_JA_KINDS = {  # a cue found stands for its kinds and those of every cue inside it
    found: frozenset(k for k, cues in JA_CUES_ALL.items() if any(c in found for c in cues))
    for found in {c for cues in JA_CUES_ALL.values() for c in cues}
}


@functools.lru_cache(maxsize=8192)  # a clause's words repeat across answers: mostly lookups
def _kinds_in_word(word: str) -> frozenset[str]:
    return frozenset(kind for kind, cues in _EN_WORD_CUES.items() if any(c in word for c in cues))


def cued_en(clause_words: list[str]) -> frozenset[str]:
    """The kinds whose cue words an English clause (in its words) holds; most clauses: none."""
    return frozenset().union(*map(_kinds_in_word, clause_words))


def cued_ja(lower: str) -> frozenset[str]:
    """The kinds whose cue words a Japanese clause holds, in one pass (no cue starts inside
    another, so none hides another: tests/unit/policy/test_claims.py checks it)."""
    return frozenset().union(*(_JA_KINDS[found] for found in _JA_CUE.findall(lower)))
