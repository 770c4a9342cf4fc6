"""The offline extractor: a column's value for one paper, read from the paper's own sentences.

Without a model Bayes cannot interpret; it can find the sentence that states the answer and
read the value off it, and say "not found" when no sentence does:

- `number`: a count next to the question's unit words ("120 patients", "a total of 1,024
  women", "n = 57" in a sentence naming the unit); the sentence that states it is the quote.
- `yes_no`: "yes" when one sentence states every term of the question (or criterion),
  unnegated; "no" with the sentence that names the paper's design otherwise; "unsure" when a
  sentence states some but not all of them.
- `choice`: the option most fully stated by the sentences that answer the question.
- `text`: the sentence that best answers the question (finding cues for "main finding").

Every value rests on one sentence (`evidence.Sentence`), quoted verbatim with its page.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from bayes_app.search.sparse import tokens
from bayes_app.tables.columns import Column
from bayes_app.tables.evidence import Sentence

FOUND, NOT_FOUND, EDITED = "found", "not_found", "edited"

# Words of a question that ask rather than name what is asked.
_ASKING = frozenset(
    """how many much what which who whom whose when where why was were is are do does did
    has have had been be this that these those the a an of in on for to with by from paper
    study studies article report reported reports number total main primary overall value
    values use used using given any there it its their they there each per studied included enrolled
    analysed analyzed recruited examined involved investigated sampled surveyed participated treated
    assessed followed""".split()
)
# People a study counts: a question naming one of them counts any of them.
_PEOPLE = frozenset(
    """participant participants patient patients subject subjects individual individuals people
    person persons volunteer volunteers respondent respondents adult adults child children
    woman women man men case cases infant infants student students worker workers resident
    residents user users member members survivor survivors veteran veterans pregnancy
    pregnancies mother mothers smoker smokers donor donors recipient recipients athlete
    athletes employee employees nurse nurses physician physicians boy boys girl girls
    adolescent adolescents newborn newborns neonate neonates control controls""".split()
)
_PEOPLE_STEMS = frozenset(tokens(" ".join(_PEOPLE)))
# Sentences that report a sample: cue stems.
_SAMPLE_CUES = frozenset(
    tokens(
        "enrolled recruited included randomized randomised assigned allocated total cohort sample "
        "comprising consisting involving studied analysed analyzed participated followed surveyed"
    )
)
_FINDING_CUES = frozenset(
    tokens(
        "found find showed shows show demonstrate demonstrated suggest suggests indicate indicates "
        "conclude conclusion conclusions results reveal revealed associated association significantly "
        "increased decreased reduced improved higher lower risk effect effects"
    )
)
_NEGATION = re.compile(r"\b(?:not|no|non|without|neither|nor|never)\b[- ]?", re.I)
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1}
_SCALES = {"hundred": 100, "thousand": 1000}
_SPELLED_START = frozenset(_NUMBER_WORDS) | frozenset(_TENS)
_NUM = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?![\w%]|\.\d|,\d)")
_N_EQUALS = re.compile(r"\b[nN]\s*=\s*(\d{1,3}(?:,\d{3})+|\d+)\b")
# a count may group its thousands with commas or (thin) spaces: "1,248", "141 311"
_WORD = re.compile(r"\d{1,3}(?:[ \u2009\u202f]\d{3})+(?![\d.,])|[A-Za-z]+(?:-[A-Za-z]+)?|\d[\d,]*")
# words that end the phrase between a count and its unit ("3 studies conducted in ... patients")
_BREAK = frozenset("in from of at to with by for were was who that which and or than".split())
_N_TOTAL = re.compile(r"\bN\s*=\s*(\d{1,3}(?:[,\u2009\u202f ]\d{3})+|\d+)\b")
# spelling variants matched as one term (British -ise, and the design vocabulary of reviews)
_SYNONYMS = (
    (re.compile(r"\brandomly\s+(?:assigned|allocated|divided)\b", re.I), "randomized"),
    (re.compile(r"\brandomi[sz](?:ation|ed|ing)\b", re.I), "randomized"),
    (re.compile(r"\brandomly\s+(?:selected|chosen|sampled|drawn)\b", re.I), "sampled"),
    (re.compile(r"\b(?:selected|chosen|sampled|drawn)\s+at\s+random\b", re.I), "sampled"),
    (re.compile(r"\bRCT\b"), "randomized controlled trial"),
    (re.compile(r"\b(\w+)is(ed|es|ing|ation)\b", re.I), r"\1iz\2"),
)
MAX_COUNT = 10_000_000


@dataclass(frozen=True, slots=True)
class Extracted:
    """One cell's value and the sentence it rests on (None when not found)."""

    value: str | int | float | None
    status: str
    sentence: Sentence | None = None
    score: float = 0.0


def _norm(text: str) -> str:
    for pattern, repl in _SYNONYMS:
        text = pattern.sub(repl, text)
    return text


# A plural design noun describes other work ("evidence from randomized trials is lacking",
# "only 23 were RCTs"); this paper's own design is singular.
_OTHER_WORK = re.compile(r"\b(?:trials|RCTs|studies)\b", re.I)


def _own_design(text: str) -> str:
    return _OTHER_WORK.sub("otherwork", text)


def _stems(text: str) -> list[str]:
    return tokens(_norm(text).replace("-", " "))


def question_terms(question: str) -> list[str]:
    """The stems a question asks about (its words minus asking words), in order, distinct."""
    words = [w for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", _norm(question)) if w.lower() not in _ASKING]
    out: list[str] = []
    for stem in _stems(" ".join(words)):
        if stem not in out:
            out.append(stem)
    return out


class _Idf:
    """Inverse document frequency of stems over one paper's sentences (rare terms weigh more)."""

    def __init__(self, sentences: Sequence[Sentence]) -> None:
        self.n = max(len(sentences), 1)
        self.df: Counter[str] = Counter()
        self.stems: list[set[str]] = []
        for s in sentences:
            st = set(_stems(s.match))
            self.stems.append(st)
            self.df.update(st)
        self._sentences = sentences
        self._own: list[set[str]] | None = None

    @property
    def own(self) -> list[set[str]]:
        """Stems of each sentence with plural design nouns (other work) masked."""
        if self._own is None:
            self._own = [set(_stems(_own_design(s.match))) for s in self._sentences]
        return self._own

    def weight(self, stem: str) -> float:
        return math.log(1 + self.n / (1 + self.df.get(stem, 0)))


def _overlap(terms: Sequence[str], stems: set[str], idf: _Idf) -> float:
    if not terms:
        return 0.0
    total = sum(idf.weight(t) for t in terms)
    return sum(idf.weight(t) for t in terms if t in stems) / total if total else 0.0


def _position_prior(s: Sentence, n: int) -> float:
    """Early sentences (abstract, introduction of the study) state designs and samples."""
    return 1.0 - min(s.position / max(n, 1), 1.0)


# ---- number ---------------------------------------------------------------------------------


def _units(question: str) -> set[str]:
    terms = set(question_terms(question))
    if terms & _PEOPLE_STEMS:
        terms |= _PEOPLE_STEMS
    return terms


def _to_int(raw: str) -> int | None:
    raw = re.sub(r"[,\u2009\u202f ]", "", raw)
    if raw.isdigit():
        value = int(raw)
        return value if 0 < value <= MAX_COUNT else None
    low = raw.lower()
    if "-" in low:  # "seventy-five"
        tens, _, unit = low.partition("-")
        return _TENS[tens] + _NUMBER_WORDS[unit] if tens in _TENS and unit in _NUMBER_WORDS else None
    return _NUMBER_WORDS.get(low, _TENS.get(low))


def _spelled(words: list[str], i: int) -> tuple[int | None, int]:
    """A count spelled out from word i ("Two hundred three", "seventy-five"): value, words used."""
    total, current, j = 0, 0, i
    while j < len(words):
        w = words[j].lower()
        if w in _SCALES:
            if current == 0:
                break
            current *= _SCALES[w]
            if _SCALES[w] >= 1000:
                total, current = total + current, 0
        elif w == "and" and j > i:
            pass
        else:
            v = _to_int(w) if not w[0].isdigit() else None
            if v is None:
                break
            current += v
        j += 1
    value = total + current
    return (value or None), j - i


@lru_cache(maxsize=50_000)
def _stem(word: str) -> str:
    got = tokens(word)
    return got[0] if got else ""


def counts_in(sentence: str, units: set[str]) -> list[int]:
    """The counts of `units` a sentence states, in order: a number (digits or a word up to
    twenty) followed within four words by a unit word, or "n = N" in a sentence naming one."""
    total = _N_TOTAL.search(sentence)
    if total and (v := _to_int(total.group(1))) is not None:
        return [v]
    words = _WORD.findall(_norm(sentence))
    stems = [_stem(w) for w in words]
    found: list[int] = []
    skip_to = 0
    for i in range(len(words)):
        if i < skip_to or (number := _number_at(words, i)) is None:
            continue
        value, used = number
        skip_to = i + used
        if i > 0 and words[i - 1].lower() in {"p", "aged", "age", "ages", "day", "days", "week", "weeks", "year"}:
            continue
        if _counts_unit(words, stems, i, used, units):
            found.append(value)
    if not found and set(stems) & (units | _SAMPLE_CUES):
        groups = [v for m in _N_EQUALS.finditer(sentence) if (v := _to_int(m.group(1))) is not None]
        # "A (n = 42) or B (n = 42)": the groups of one comparison make its sample
        found = [sum(groups)] if len(groups) > 1 else groups
    return found


def _number_at(words: list[str], i: int) -> tuple[int, int] | None:
    """(the number words[i] starts, how many words it takes); None for no number or a year."""
    w = words[i]
    if w[0].isdigit():
        value, used = _to_int(w), 1
    elif w.lower().split("-")[0] in _SPELLED_START:
        value, used = _spelled(words, i)
    else:
        return None
    if value is None or (w.isdigit() and 1900 <= value <= 2100 and len(w) == 4):
        return None
    return value, used


def _counts_unit(words: list[str], stems: list[str], i: int, used: int, units: set[str]) -> bool:
    """Does a unit word follow the number at `i` (`used` words) within the next seven words,
    before a phrase break or another number, and the number is no age, duration or dose?"""
    for j in range(i + used, min(i + used + 7, len(words))):
        if stems[j] in units:
            nxt = " ".join(words[i + 1 : i + 3]).lower()
            return not nxt.startswith(("years", "year", "months", "weeks", "days", "hours", "mg", "kg"))
        if words[j].lower() in _BREAK or _to_int(words[j]) is not None:
            return False
    return False


def extract_number(column: Column, sentences: Sequence[Sentence], idf: _Idf) -> Extracted:
    units = _units(column.question)
    terms = question_terms(column.question)
    best: Extracted | None = None
    n = len(sentences)
    for i, s in enumerate(sentences):
        counts = counts_in(s.match, units)
        if not counts:
            continue
        stems = idf.stems[i]
        total = re.search(r"\b(?:a total of|total of|in total|overall)\s+([\d,]+)", s.match, re.I)
        value = _to_int(total.group(1)) if total and _to_int(total.group(1)) in counts else None
        value = value if value is not None else counts[0]
        # any people word counts as the question's unit ("patients" for "participants")
        named = 1.0 if stems & units else _overlap(terms, stems, idf)
        score = (
            named
            + 0.6 * bool(stems & _SAMPLE_CUES)
            - 0.5 * bool(re.search(r"\(\d+(?:\.\d+)?%\) of [\d,]+", s.match))
            + 0.4 * _position_prior(s, n)
            + 0.3 * (total is not None)
        )
        if best is None or score > best.score:
            best = Extracted(value, FOUND, s, score)
    return best or Extracted(None, NOT_FOUND)


# ---- yes / no ---------------------------------------------------------------------------------


def _negated(sentence: str, term_words: Sequence[str]) -> bool:
    """Is one of the criterion's words negated in the sentence ("non-randomized", "not randomized")?"""
    text = _norm(sentence).lower()
    for w in term_words:
        for m in re.finditer(rf"\b{re.escape(w[:6])}", text):
            if _NEGATION.search(text[max(0, m.start() - 12) : m.start()]):
                return True
    return False


# Generic words of a design ("trial", "study", "controlled") that any word naming a compared,
# assigned study satisfies: "a prospective, randomized study compared ..." is a randomized
# controlled trial although it does not say "controlled trial".
_DESIGN_NOUNS = frozenset(tokens("trial study studies controlled control clinical experiment"))
_DESIGN_WITNESS = frozenset(
    tokens("trial study controlled control placebo compared comparing versus assigned allocated arm arms group groups")
)


def _satisfied(terms: Sequence[str], stems: set[str]) -> list[str]:
    """The question terms a sentence states (a generic design noun by any design witness)."""
    witness = bool(stems & _DESIGN_WITNESS)
    return [t for t in terms if t in stems or (t in _DESIGN_NOUNS and witness)]


def _design_sentence(sentences: Sequence[Sentence], idf: _Idf) -> int | None:
    """The first sentence that names a design (a "no" quotes what the paper is instead)."""
    for i in range(len(sentences)):
        if idf.stems[i] & _DESIGN_WORDS:
            return i
    return None


_DESIGN_WORDS = frozenset(
    tokens("trial study cohort case-control cross-sectional survey review meta-analysis experiment series report")
)


def extract_yes_no(column: Column, sentences: Sequence[Sentence], idf: _Idf) -> Extracted:
    """ "yes" when one sentence states every specific term of the question unnegated (and its
    generic design nouns, by any design witness); "unsure" when one states at least half of
    them; else "no", quoting the sentence that names what the paper is."""
    terms = question_terms(column.question)
    if not terms or not sentences:
        return Extracted(None, NOT_FOUND)
    specific = [t for t in terms if t not in _DESIGN_NOUNS] or terms
    generic = [t for t in terms if t in _DESIGN_NOUNS and t not in specific]
    term_words = [w.lower() for w in re.findall(r"[A-Za-z]{4,}", _norm(column.question)) if w.lower() not in _ASKING]
    n = len(sentences)

    def rank(i: int) -> tuple[float, bool, float]:
        stems = idf.own[i]
        if "otherwork" in stems:  # a sentence about other work says nothing of this paper's design
            return (0.0, False, _position_prior(sentences[i], n))
        return (
            _overlap(specific, stems, idf),
            len(_satisfied(generic, stems)) == len(generic),
            _position_prior(sentences[i], n),
        )

    top = max(range(n), key=rank)
    cover, generic_ok, _ = rank(top)
    s = sentences[top]
    if cover >= 0.999 and generic_ok:
        return Extracted("no" if _negated(s.match, term_words) else "yes", FOUND, s, cover)
    if cover >= 0.5 and len(specific) > 1:
        return Extracted("unsure", FOUND, s, cover)
    design = _design_sentence(sentences, idf)
    if design is None:
        return Extracted(None, NOT_FOUND)
    return Extracted("no", FOUND, sentences[design], cover)


# ---- choice -----------------------------------------------------------------------------------


def extract_choice(column: Column, sentences: Sequence[Sentence], idf: _Idf) -> Extracted:
    terms = question_terms(column.question)
    best: Extracted | None = None
    n = len(sentences)
    for option in column.choices:
        opt_terms = list(dict.fromkeys(_stems(option)))
        if not opt_terms:
            continue
        for i, s in enumerate(sentences):
            cover = _overlap(opt_terms, idf.stems[i], idf)
            if cover < 0.999:
                continue
            score = cover + 0.5 * _overlap(terms, idf.stems[i], idf) + 0.2 * _position_prior(s, n)
            if best is None or score > best.score:
                best = Extracted(option, FOUND, s, score)
    return best or Extracted(None, NOT_FOUND)


# ---- text -------------------------------------------------------------------------------------


_BACKGROUND = re.compile(
    r"\s*(?:background|objectives?|aims?|purpose|introduction|methods?|to (?:test|assess|determine|examine)|"
    r"we (?:evaluated|investigated|examined|assessed|studied|sought|aimed|hypothesi[sz]ed)|"
    r"(?:the|our) (?:aim|objective|purpose) |little is known|it is (?:unclear|unknown))",
    re.I,
)


def _asks_for_finding(question: str) -> bool:
    return bool(re.search(r"\b(finding|findings|result|results|conclu\w*|outcome|effect|show)\b", question, re.I))


def extract_text(column: Column, sentences: Sequence[Sentence], idf: _Idf) -> Extracted:
    terms = question_terms(column.question)
    finding = _asks_for_finding(column.question)
    first_page = sentences[0].page
    first_count = sum(1 for s in sentences if s.page == first_page)
    best: Extracted | None = None
    for i, s in enumerate(sentences):
        stems = idf.stems[i]
        score = _overlap(terms, stems, idf) if terms else 0.0
        if finding:
            cues = len(stems & _FINDING_CUES)
            score += 0.35 * min(cues, 3)
            if re.match(
                r"\s*(?:in conclusion|conclusions?|we conclude|overall|taken together|these (?:results|findings))",
                s.match,
                re.I,
            ):
                score += 0.8
            if _BACKGROUND.match(s.match):
                score -= 0.6
            # the abstract's closing sentences carry the main finding: late on the first page
            if s.page == first_page:
                score += 0.5 * (i / max(first_count - 1, 1))
        if best is None or score > best.score:
            best = Extracted(s.text, FOUND, s, score)
    if best is None or best.score < 0.34:
        return Extracted(None, NOT_FOUND)
    return best


EXTRACTORS = {"number": extract_number, "yes_no": extract_yes_no, "choice": extract_choice, "text": extract_text}


def extract(column: Column, sentences: Sequence[Sentence]) -> Extracted:
    """The value of `column` for a paper with these sentences (reading order), offline."""
    if not sentences:
        return Extracted(None, NOT_FOUND)
    return EXTRACTORS[column.type](column, sentences, _Idf(sentences))


def candidates(column: Column, sentences: Sequence[Sentence], k: int = 8) -> list[Sentence]:
    """The `k` sentences most likely to answer `column` (the offline pick first), in reading
    order after it: what a model reads to answer the column."""
    if not sentences:
        return []
    idf = _Idf(sentences)
    pick = EXTRACTORS[column.type](column, sentences, idf).sentence
    terms = question_terms(column.question) + [t for c in column.choices for t in _stems(c)]
    units = _units(column.question) if column.type == "number" else set()
    n = len(sentences)

    def score(i: int) -> float:
        s = sentences[i]
        bonus = 0.5 if units and counts_in(s.match, units) else 0.0
        return _overlap(terms, idf.stems[i], idf) + bonus + 0.2 * _position_prior(s, n)

    ranked = sorted(range(n), key=score, reverse=True)[:k]
    chosen = sorted(set(ranked) - ({pick.position} if pick else set()))
    head = [pick] if pick is not None else []
    return (head + [sentences[i] for i in chosen])[:k]


def extract_all(columns: Sequence[Column], sentences: Sequence[Sentence]) -> dict[str, Extracted]:
    """Every column's value for one paper (the paper's term statistics computed once)."""
    if not sentences:
        return {c.key: Extracted(None, NOT_FOUND) for c in columns}
    idf = _Idf(sentences)
    return {c.key: EXTRACTORS[c.type](c, sentences, idf) for c in columns}
