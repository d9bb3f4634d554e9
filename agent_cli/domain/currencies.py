"""The ISO 4217 currency codes a refund rule may name: every currency in use (2025), without the
codes that are no money (XXX, XTS) or no shop's (gold, silver, SDRs, bond units). Kept here, not
fetched: the list changes once in a few years. With them, each one's minor units and the
conversions between what people write (129.99 USD) and what the store keeps (12999)."""

from decimal import Decimal

ISO_4217 = frozenset(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN
    BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP
    ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK
    JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK
    MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN
    PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB
    TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD
    XCG XOF XPF YER ZAR ZMW ZWG ZWL
    """.split()  # noqa: SIM905 - a block of codes reads better than 180 quoted lines
)

# ISO 4217's minor units where they are not 2 (the store keeps every amount in minor units:
# JPY 250,000 is 250000, USD 129.00 is 12900).
_EXPONENTS = {
    **dict.fromkeys(
        [
            "BIF",
            "CLP",
            "DJF",
            "GNF",
            "ISK",
            "JPY",
            "KMF",
            "KRW",
            "PYG",
            "RWF",
            "UGX",
            "UYI",
            "VND",
            "VUV",
            "XAF",
            "XOF",
            "XPF",
        ],
        0,
    ),
    **dict.fromkeys(["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"], 3),
    **dict.fromkeys(["CLF", "UYW"], 4),
}


def exponent(currency: str) -> int:
    """How many decimals the currency has (JPY 0, USD 2, KWD 3)."""
    return _EXPONENTS.get(currency.upper(), 2)


def to_minor(value: int | float | Decimal | str, currency: str) -> int:
    """An amount in the currency's major units (129.99 USD) as minor units (12999), exactly: a
    float is read as its shortest decimal form (τ²'s 47.84 is 4784, never 4783); ValueError
    for more decimals than the currency has, or for what is no finite number."""
    try:
        exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except ArithmeticError:
        raise ValueError(f"{value!r} is not an amount") from None
    if not exact.is_finite():
        raise ValueError(f"{value!r} is not an amount")
    minor = exact.scaleb(exponent(currency))
    if minor != minor.to_integral_value():
        places = exponent(currency)
        raise ValueError(f"{value} has more decimals than {currency.upper()} has ({places})")
    return int(minor)


def major(minor: int, currency: str, *, grouped: bool = True) -> str:
    """Minor units as the currency is written: 250,000 (JPY), 1,234.56 (USD); `grouped=False`
    leaves out the thousands separators (for `key=value` facts a model and a parser read)."""
    places = exponent(currency)
    text = f"{Decimal(minor).scaleb(-places):{',' if grouped else ''}.{places}f}"
    return text


def money(minor: int, currency: str) -> str:
    """`1,234.56 USD`, `250,000 JPY`."""
    return f"{major(minor, currency)} {currency.upper()}"


def major_number(minor: int, currency: str) -> int | float:
    """Minor units as a JSON number in major units (what files and `--json` hold: 129.99 USD,
    250000 JPY); the float's shortest form is the exact decimal, so `to_minor` reads it back."""
    places = exponent(currency)
    return minor if places == 0 else float(Decimal(minor).scaleb(-places))
