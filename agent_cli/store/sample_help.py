"""The sample shop's help centre: six short articles, each in English with a Japanese paragraph,
written for the sample shop (it ships from Yokohama with Yamato Transport, in yen)."""

from __future__ import annotations

from agent_cli.domain.records import Article

SAMPLE_ARTICLES = (
    Article(
        "shipping-times",
        "Shipping times by region",
        "Orders leave our Yokohama warehouse within 1 business day and travel with Yamato "
        "Transport.\n\n"
        "Delivery takes 1-2 business days to Tokyo, Kanagawa and the Kanto region; 2-3 business "
        "days to Osaka, Kyoto, Nagoya and the rest of Honshu; 3-4 business days to Hokkaido, "
        "Shikoku, Kyushu and Okinawa.\n\n"
        "Once an order ships, its tracking number shows where it is.\n\n"
        "配送日数の目安：関東は1〜2営業日、大阪・京都・名古屋など本州のその他の地域は2〜3営業日、"
        "北海道・四国・九州・沖縄は3〜4営業日です。",
    ),
    Article(
        "returns-opened-items",
        "Returning opened items",
        "Items can be returned within 30 days of delivery, opened or not, as long as they are "
        "complete and undamaged. Opened food and personal care items cannot be returned.\n\n"
        "Ask us for a return and we email how and where to send the items; the refund follows "
        "once they arrive.\n\n"
        "開封済みの商品も、お届けから30日以内で付属品がそろい破損がなければ返品できます。"
        "開封済みの食品・衛生用品は返品できません。",
    ),
    Article(
        "refund-methods",
        "How refunds are paid, and when",
        "A refund goes back to the payment method the order was paid with, or to a gift card "
        "if you prefer. Gift card refunds arrive at once; card and PayPal refunds take 5-7 "
        "business days to show.\n\n"
        "A partly refunded order can be refunded up to what is left of its total.\n\n"
        "返金はお支払いに使われた方法、またはギフトカードに戻ります。ギフトカードへの返金は即時、"
        "クレジットカードとPayPalへの返金は5〜7営業日かかります。",
    ),
    Article(
        "warranty",
        "Warranty",
        "Appliances and electronics (espresso machines, cameras, earbuds, watches, rice "
        "cookers) carry a 1-year manufacturer's warranty from the delivery date. Keep the order "
        "number: a person on our team arranges the repair or a replacement.\n\n"
        "家電・電子機器にはお届け日から1年間のメーカー保証があります。修理や交換は担当者が手配します。",
    ),
    Article(
        "payment-methods",
        "Payment methods",
        "We take credit cards (Visa, Mastercard, JCB, American Express), PayPal and our gift "
        "cards. A pending order's payment method can be changed before it ships.\n\n"
        "お支払い方法：クレジットカード（Visa、Mastercard、JCB、American Express）、PayPal、"
        "当店ギフトカードをご利用いただけます。",
    ),
    Article(
        "contact-a-person",
        "Talking to a person",
        "Our team answers on weekdays, 9:00-18:00 Japan time. Ask the assistant for a person "
        "at any time: it opens a ticket with your question and order, and someone follows up "
        "by email within 1 business day.\n\n"
        "担当者は平日9時から18時まで対応しています。担当者をご希望の場合はいつでもお申し付けください。"
        "1営業日以内にメールでご連絡します。",
    ),
)
