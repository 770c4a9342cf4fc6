"""Which text may become a claim: complete declarative sentences of body text or captions.

    candidate_sentences(raw_passage_text) -> [sentence]    verbatim, headings and markers cut off
    claim_problem(sentence) -> None | reason               why it is not a claim sentence
    role_allows_claims(role) -> bool                       body / caption (or unknown role)

A passage's raw text keeps the PDF's line breaks: a short line without end punctuation that
starts with a section number ("4.3 Selector") ends the sentence before it and is dropped, so
headings don't glue onto the first sentence after them. Superscript citation numbers that the
PDF glues to a sentence ("… correlations.17 Explaining …", "44,46 SHAP has …") are split off.

Rejected (reasons): reference-list entries and citation lists, figure/table text, equations,
e-mail/affiliation/URL lines, prompt listings and instructions, questions, fragments (no
capital start, no end punctuation, no verb), too short or too long.
"""

from __future__ import annotations

import re
import unicodedata

from bayes_app.library.hyphens import join_broken_words
from bayes_app.library.structure import QUOTABLE as CLAIM_ROLES  # body, caption
from bayes_app.llm import sentences as llm_sentences

_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+|(?<=[a-z)\]])[.!?]\d+(?:[,–-]\d+)*\s+(?=[A-Z])")
_ABBREVIATIONS = frozenset(
    "e.g i.e fig figs eq eqs et al vs cf dr mr mrs ms no nos vol pp ca approx resp sec ref refs "
    "al. ed eds st jr inc ltd co corp dept univ".split()
)
_LEADING_MARKER = re.compile(
    r"^(?:[•·▪◦∙*–-]\s*|\d+(?:\s*[,–-]\s*\d+)*\s+(?=[A-Z])"
    # footnote URLs a scan's reading order ran into the sentence: "https: //cvpr.thecvf .com/… Although …"
    r"|(?:\S{0,3}(?:https?:\s*//|www\.)\S*(?:\s\.\S+)*\s+)+(?=[A-Z]))"
)
_HEADING_LINE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.?(?:\d+\.?)*|[IVX]+\.)\s+[A-Z].{0,80}$")
_NAMED_HEADING = re.compile(
    r"^(?:abstract|introduction|background|methods?|materials and methods|results|"
    r"discussion|conclusions?|conclusion and outlook|related work|acknowledg\w*|"
    r"references|bibliography|appendix\b.*|limitations|future work)$",
    re.I,
)

_AUXILIARIES = frozenset(
    "is are was were be been being am has have had do does did can could may might will would shall should must".split()
)
_IMPERATIVE = frozenset(
    "generate please write list give return output answer find select choose provide "
    "summarize summarise describe explain classify consider imagine let use "
    "read evaluate rate decide determine identify extract rewrite translate append add "
    "stop expand remove repeat compute initialize initialise construct include avoid "
    "ensure make see refer note do don't try follow format formulate begin start".split()
)
_QUESTION_START = frozenset(
    "is are was were do does did can could should would will which what how why who whom whose when where".split()
)
_SECOND_PERSON = re.compile(
    r"^(?:You|Your)\b|\bplease\b|\{[^}]*\}|\[[“\"']|^[A-Z][\w ]{0,30}:\s+(?:You|Your|Do|Don't|Please)\b", re.I
)
_INNER_LABEL = re.compile(r"\b(?:Table|Figure|Fig\.)\s*\d+[a-z]?\s*:")
_NUMERIC = re.compile(r"^(?=.*\d)[\d.,%±()\[\]/+-]+$")  # a number, not punctuation left alone
# a run-in heading before the sentence: "5.4 Ablation study We perform …", "Selector The Selector was …"
_STARTERS = (
    r"(?=(?:The|We|Our|In|As|A|An|This|These|Those|It|Its|To|For|During|Here|Finally|Moreover|"
    r"However|Although|Given|Since|When|After|Unlike|Recent|Many|Most|Several|Each|One)\s)"
)
_NUMBERED_RUN_IN = re.compile(r"^(?:\d+(?:\.\d+)+\.?|\d+\.?|[A-Z]\.\d+(?:\.\d+)*)\s+(?:\S+\s+){1,6}?" + _STARTERS)
_TITLED_RUN_IN = re.compile(r"^(?:[A-Z][\w’'-]*\s+){1,3}?" + _STARTERS)
# the same in sentence case (a passage's line breaks lost): "Solubility prediction The model …"
_SENTENCE_CASE_RUN_IN = re.compile(r"^[A-Z][\w’'-]*(?:\s+[a-z][\w’'-]*){1,3}?\s+" + _STARTERS)
# "Methodology 4.1 Overview As illustrated …": a section heading, then a subsection heading
_NESTED_RUN_IN = re.compile(r"^(?:[A-Z][\w’'-]*\s+){1,4}\d+(?:\.\d+)+\.?\s+(?:\S+\s+){0,6}?" + _STARTERS)
_REFERENCE = [
    re.compile(
        r"^\s*(?:\(\d{1,3}\)|\[\d{1,3}\]|\d{1,3}\.)\s+[A-Z][\w'’-]+,?\s+(?:[A-Z]\.|[A-Z][a-z]+)"
    ),  # (57) Sheridan, R. P.
    re.compile(r"\b(?:19|20)\d{2}[a-z]?\s*[,;]\s*\d+\s*(?:\(\d+\))?\s*[,:]\s*\d+\s*[–-]\s*\d+"),  # 2018, 84, 96–108
    re.compile(r"\b\d+\s*\(\d+\)\s*:\s*\d+\s*[–-]\s*\d+"),  # 11(2):181–217
    re.compile(
        r"\b(?:arXiv preprint|In Proceedings of|Proceedings of the|pp\.\s*\d|doi:\s*10\.|"
        r"Advances in Neural Information Processing|Journal of [A-Z][a-z]+.*\b(?:19|20)\d{2}\b)",
        re.I,
    ),
    re.compile(r"(?:[A-Z][a-z]+,\s+(?:[A-Z]\.\s*){1,3}[;,]\s*){2,}"),  # Cheng, T.; Gindulyte, A.;
    re.compile(r"\[\d+\]\s+[A-Z].*\[\d+\]\s+[A-Z]"),  # "[29] Title … [30] Title" lists
]
_CONTACT = re.compile(
    r"[\w.+-]+@[\w-]+\.[\w.]+|https?://|www\.|\{[\w,.\s]+\}@|\bcorresponding author\b|"
    r"\b(?:University|Institute|Department|Laboratory|Universität|College) of\b",
    re.I,
)
_PROMPT = re.compile(
    r"\{[a-z_]+\}|\[(?:User|System|Assistant)[’'`]?s?\b[^\]]*\]|^\s*(?:You are|Your task)\b|"
    r"\b(?:Query|Answer Papers|User Query|Search Session|Expand Session)\s*:",
    re.I,
)
_LABEL = re.compile(r"^(?:Figure|Fig\.|Table|Algorithm|Listing|Equation|Eq\.)\s*[A-Z]?\d+[a-z]?\s*[:.|]\s*", re.I)
_MATH = re.compile(r"[=∑∏∫√∈∉≤≥≈≠±×÷∂∇→←↔^_|<>αβγδεϵζηθικλμνξπρσςτυφχψωΓΔΘΛΞΠΣΦΨΩ]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


_REFERENCE_SIGNAL = re.compile(
    r"arXiv(?:\s+preprint|:\s*\d)|\bpreprint\b|\bProceedings\b|\bConference on\b|\bJournal\b|\bTransactions\b|"
    r"\bpp\.?\s*\d|\bdoi\b|https?:|\b\d+\s*,\s*\d+\s*[–-]\s*\d+|(?:^|\n)\s*\(\d{1,3}\)\s+[A-Z]|"
    r"(?:^|\n)\s*\[\d{1,3}\]\s+[A-Z]|\b(?:19|20)\d{2}[a-z]?\.\s|[A-Z][a-z]+,\s(?:[A-Z]\.\s?){1,3};",
    re.M,
)


def looks_like_reference_list(raw: str) -> bool:
    """A passage that reads as a reference list (entry patterns: years closing an author list,
    "arXiv preprint", venues, page ranges, "(12) Name, A."): none of it is quoted for claims.
    The fallback while a passage has no role from structure-aware ingestion."""
    words = len(raw.split())
    if words == 0:
        return False
    hits = len(_REFERENCE_SIGNAL.findall(raw))
    return hits >= 3 and hits * 100 / words >= 3.0


def role_allows_claims(role: str | None) -> bool:
    """Quotes for claims come from body text and captions (roles from structure-aware
    ingestion); text of unknown role is allowed (the sentence checks still apply)."""
    return role is None or role == "" or role in CLAIM_ROLES


def roles_allow_claims(roles: set[str]) -> bool:
    """Every role a quote's page span overlaps allows claims."""
    return all(role_allows_claims(r) for r in roles)


# ---- splitting -----------------------------------------------------------------------------------
def split_sentences(text: str) -> list[str]:
    """Sentences of a text, verbatim ("e.g.", "Fig. 3", "et al." and initials do not split;
    a superscript citation after the full stop splits after the numbers)."""
    # "Fig. 3a. shows" / "vs. the": a lower-case word or a comma after the stop continues it
    return llm_sentences.split_sentences(text, _SENTENCE_END, _ABBREVIATIONS, lambda nxt: nxt.islower() or nxt in ",;:")


def _is_heading_line(line: str) -> bool:
    s = line.strip()
    if not s or len(s.split()) > 12 or s[-1] in ".!?:;,":
        return False
    if _NAMED_HEADING.match(s):
        return True
    if not _HEADING_LINE.match(s):
        return False
    long_words = [w for w in _WORD.findall(s) if len(w) >= 4]
    # "5.1 Experimental Setting", "B Implementation Details of the Selector" — not a wrapped
    # line of prose that happens to start with a number or a capital
    return bool(long_words) and sum(w[0].isupper() for w in long_words) >= 0.6 * len(long_words)


_HEADING_WORD = re.compile(r"^[A-Za-z][A-Za-z’'-]*$")
_OPEN_END = frozenset("a an the of for and or to in on with by from at as into than that which via".split())


def is_sentence_case_heading(line: str, before: str, after: str) -> bool:
    """An unnumbered heading in sentence case on a line of its own ("Solubility prediction",
    "Surrogate models"): a few words, letters only, opening in upper case, ending without
    punctuation or an open word ("for", "and"), after a line that ended a sentence (or none)
    and before a longer line that opens one."""
    s, prev, nxt = line.strip(), before.strip(), after.strip()
    words = s.split()
    if not 1 <= len(words) <= 6 or not s[0].isupper() or words[-1].lower() in _OPEN_END:
        return False
    if not all(_HEADING_WORD.match(w) for w in words):
        return False
    if prev and prev[-1] not in ".!?:" and not _is_heading_line(prev):
        return False  # a line wrapped inside a sentence
    return bool(nxt) and nxt[0].isupper() and len(nxt.split()) > len(words)


def _blocks(raw: str) -> list[str]:
    """The raw text cut at heading lines (dropped), lines re-joined, hyphenation marks removed."""
    blocks: list[str] = []
    cur: list[str] = []
    lines = re.split(r"\r\n|\r|\n", raw)
    for i, line in enumerate(lines):
        before = lines[i - 1] if i else ""
        after = next((x for x in lines[i + 1 :] if x.strip()), "")
        if _is_heading_line(line) or is_sentence_case_heading(line, before, after):
            if cur:
                blocks.append(" ".join(cur))
            cur = []
            continue
        cur.append(line.strip())
    if cur:
        blocks.append(" ".join(cur))
    out: list[str] = []
    for b in blocks:
        b = " ".join(join_broken_words(b).split())
        out.extend(p.strip() for p in re.split(r"\s[•▪◦]\s", b) if p.strip())  # bullets start sentences
    return out


def _strip_run_in_heading(s: str) -> str:
    m = _NESTED_RUN_IN.match(s) or _NUMBERED_RUN_IN.match(s)
    if m and sum(c.isalpha() for c in m.group(0)) >= 3:
        return s[m.end() :]
    m = _TITLED_RUN_IN.match(s) or _SENTENCE_CASE_RUN_IN.match(s)
    if m:
        return s[m.end() :]
    words = s.split()
    # "Counterfactual explanations Counterfactual explanations can be …": the heading said twice
    for k in range(1, min(7, (len(words) - 2) // 2 + 1)):
        if words[k][:1].isupper() and [w.lower() for w in words[:k]] == [w.lower() for w in words[k : 2 * k]]:
            return s[s.index(words[k], len(" ".join(words[:k]))) :]
    # "LLM Agents LLM Agents combine …": the heading's first word starts the sentence again
    if words and words[0][:1].isupper():
        for k in range(1, min(5, len(words) - 3)):
            if words[k] == words[0] and all(w[:1].isupper() for w in words[:k]):  # a Title Case heading
                return s[s.index(words[k], len(" ".join(words[:k]))) :]
    # "Attribution methods Feature attribution methods explain …": the heading's words recur in
    # the capitalised sentence that follows it
    for k in range(2, min(5, len(words) - 3)):
        head, rest = [w.lower() for w in words[:k]], [w.lower() for w in words[k : 2 * k + 2]]
        if words[k][:1].isupper() and any(rest[i : i + k] == head for i in range(1, len(rest) - k + 1)):
            return s[s.index(words[k], len(" ".join(words[:k]))) :]
    return s


def clean_sentence(sentence: str) -> str:
    """Leading bullets, superscript citation numbers and run-in headings removed (the rest
    stays verbatim)."""
    s = sentence.strip()
    for _ in range(3):
        s2 = _strip_run_in_heading(_LEADING_MARKER.sub("", s).strip())
        if s2 == s:
            break
        s = s2
    return s


def candidate_sentences(raw: str) -> list[str]:
    """Every sentence of a passage's raw text, verbatim after cleaning (not yet checked)."""
    out: list[str] = []
    for block in _blocks(raw):
        for s in split_sentences(block):
            s = clean_sentence(s)
            if s:
                out.append(s)
    return out


# ---- checking ------------------------------------------------------------------------------------
def has_verb(words: list[str], strict: bool = False) -> bool:
    """A finite verb, roughly (no tagger): an auxiliary, a past form, or a third-person verb
    after its subject. `strict` (captions) doesn't count "-ed" words: "Results obtained on …"."""
    lower = [w.lower() for w in words]
    if any(w in _AUXILIARIES for w in lower):
        return True
    for i, w in enumerate(lower[1:], 1):
        if not strict and len(w) > 4 and w.endswith("ed") and not words[i][0].isupper() and "-" not in w:
            return True
        # a third-person verb after its subject: "PaSa achieves", "the agent invokes"
        if (
            len(w) > 3
            and w.endswith("s")
            and not w.endswith(("ss", "ous", "is", "us"))
            and not words[i][0].isupper()
            and lower[i - 1] not in _DETERMINERS
            and not lower[i - 1].endswith(("al", "ic", "ive", "ar"))
        ):
            return True
    return False


_DETERMINERS = frozenset(
    "the a an of for and or to in on with by from these those their its our some many "
    "several all both each other such two three four five".split()
)


def claim_problem(sentence: str) -> str | None:
    """None when `sentence` is a complete declarative sentence fit to be a claim, else why not."""
    s = " ".join(sentence.split())
    if not s:
        return "empty"
    if problem := _source_problem(s):
        return problem
    caption = _LABEL.match(s)
    body = s[caption.end() :] if caption else s
    words = _WORD.findall(body)
    if _INNER_LABEL.search(body):
        return "figure_text"
    return _numbers_problem(body) or _figure_text_problem(body, words) or _wording_problem(body, words, bool(caption))


def _source_problem(s: str) -> str | None:
    """Text that is not the paper's prose: contact lines, prompts, instructions, reference entries."""
    if _CONTACT.search(s):
        return "contact_or_affiliation"
    if _PROMPT.search(s):
        return "prompt_listing"
    if _SECOND_PERSON.search(s):
        return "instruction"
    if any(p.search(s) for p in _REFERENCE):
        return "reference_entry"
    return None


# How results are reported in prose, which is not an equation or a table row: a parenthesis or
# bracket with a number and a statistic ("(95% CI 1.05-2.12; P = .03)", "(1.66, 1.56 to 1.77)",
# "(0.29 vs 0.44 mg/kg)", "[n = 84]"), a test statistic's value ("P < .001", "OR = 1.4"), a
# threshold ("<0.7 ng/mL"), a mean ± its spread, a genotype ("Slc23a1−/−"), a Greek letter inside
# a name ("TNF-α", "IL-1β", "μg").
_BRACKETED = re.compile(r"[(\[][^()\[\]]*(?:[(\[][^()\[\]]*[)\]][^()\[\]]*)*[)\]]")
_STAT_VALUE = re.compile(
    r"\b(?:[PpNn]|r|R2|R²|OR|HR|RR|aOR|aHR|I2|I²|df|t|F|z|U|χ2|χ²|κ|ρ|CI)\s*[=<>≤≥]\s*[-−+]?\.?\d[\d.,·]*%?"
)
_THRESHOLD = re.compile(r"(?<![\w)])\s*[<>≤≥]\s*[-−]?\.?\d[\d.,]*")
_SPREAD = re.compile(r"\s*±\s*\d[\d.,]*")
_POWER_OF_TEN = re.compile(r"(?<=\d)\s*[×x]\s*10\s*(?:[-−]\s*\d+|⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")  # "2.4 × 10−5": a P value's exponent
_GENOTYPE = re.compile(r"[+−-]/[+−-]")
_GREEK_IN_NAME = re.compile(r"(?<=[\w-])[α-ωΑ-Ω]|[α-ωΑ-Ω](?=[\w-])")
_CHARGE = re.compile(r"\([+−-]\)|(?<=[A-Za-z\d])[+−](?![\w(])")  # "Ca2+", "Aire(+)", "CD4+ cells"


def _statistics(group: re.Match[str]) -> str:
    """A bracketed group with a number and a few words at most ("(95% CI, 1.05-2.12; P = .03)",
    "(0.29 vs 0.44 mg/kg)") goes; one of prose stays."""
    text = group.group(0)
    return "" if re.search(r"\d", text) and len(re.findall(r"[^\W\d_]{2,}", text)) <= 8 else text


def _without_statistics(body: str) -> str:
    """The sentence with its statistical reporting taken out: what is left is read for equations
    and table rows."""
    body = _BRACKETED.sub(_statistics, body)
    for pattern in (_POWER_OF_TEN, _STAT_VALUE, _THRESHOLD, _SPREAD, _GENOTYPE, _GREEK_IN_NAME, _CHARGE):
        body = pattern.sub("", body)
    return body


def _numbers_problem(body: str) -> str | None:
    """Equations, and runs of numbers from a table (results reported in prose are neither)."""
    if re.search(r"\(\d{1,2}\)\s*(?:$|[A-Z])", body):  # an equation's number
        return "equation_or_numbers"
    body = _without_statistics(body)
    if re.search(r"\s=\s|[=≈≤≥]\s*[-+]?\d", body) or sum(unicodedata.category(c) in ("Sm", "Mn") for c in body) >= 2:
        return "equation_or_numbers"
    tokens_ = body.split()
    numeric = sum(bool(_NUMERIC.match(t)) for t in tokens_)
    if numeric >= 6 and numeric >= 0.25 * len(tokens_):
        return "table_numbers"
    non_space = [c for c in body if not c.isspace()]
    letters = sum(c.isalpha() for c in non_space)
    if len(_MATH.findall(body)) >= 3 or (non_space and letters < 0.6 * len(non_space)):
        return "equation_or_numbers"
    return None


def _figure_text_problem(body: str, words: list[str]) -> str | None:
    """The labels of a figure: bracketed steps, or mostly capitalised words."""
    if re.search(r"\[[A-Z][a-z]+\].*\[[A-Z][a-z]+\]", body):  # "[Search] … [Expand]": figure text
        return "figure_text"
    titled = [w for w in words if w[0].isupper()]
    if len(words) >= 6 and len(titled) > 0.6 * len(words):
        return "figure_text"
    return None


def _wording_problem(body: str, words: list[str], captioned: bool) -> str | None:
    """Prose that is no claim: a question, an instruction, no verb, too short or long, a fragment."""
    if not words:
        return "too_short"
    if body.rstrip("\"'”’)]").endswith("?") or words[0].lower() in _QUESTION_START:
        return "question"
    after_colon = re.match(r"^[A-Z][\w ]{0,30}:\s+(\w+)", body)
    if words[0].lower() in _IMPERATIVE or (after_colon and after_colon.group(1).lower() in _IMPERATIVE):
        return "instruction"
    if not has_verb(words, strict=captioned):
        return "no_verb"
    if len(words) < 6:
        return "too_short"
    if len(words) > 80:
        return "too_long"
    return _fragment_problem(body)


def _fragment_problem(body: str) -> str | None:
    """A sentence that does not end as one, or does not start as one."""
    if not re.search(r"[.!](?:[\"'”’)\]]*|\s*\[\d+(?:[,–-]\d+)*\])$", body) and not re.search(
        r"[.!]\d+(?:[,–-]\d+)*$", body
    ):
        return "fragment"
    first = body.split()[0]
    if not (first[0].isupper() or first[0].isdigit() or any(c.isupper() for c in first[1:]) or first[0] in "\"'“‘("):
        return "fragment"
    return None
