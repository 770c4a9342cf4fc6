"""Hand labels for answer quality over the bundled papers (benchmarks/answer_quality.py and
tests/integration/test_answer_quality.py).

Per question:
- `facts`: the answer-bearing facts, each a tuple of alternative excerpts of the sentences that
  state it (in the paper's words). A fact is *reached* when a quoted sentence contains one of them.
- `regions`: where the paper addresses the question: (page, first words, last words) of a stretch
  of text; a claim *addresses* the question when its quote states a fact or lies inside a region.

Excerpts are compared after `norm` (lower case, letters and digits only), so line breaks,
hyphenation and spacing around citation marks don't matter. Labelled by reading the papers; no
code reads these labels except the measurement.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

PASA = "pasa.pdf"
XAI = "explanations-molecular-prediction-models.pdf"


def norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


@dataclass(frozen=True)
class Labelled:
    question: str
    paper: str
    facts: tuple[tuple[str, ...], ...]
    regions: tuple[tuple[int, str, str], ...]


QUESTIONS: tuple[Labelled, ...] = (
    Labelled(
        "How is the PaSa Crawler trained?",
        PASA,
        (
            ("training process for the Crawler comprises two stages", "The training process involves two stages"),
            (
                "generate trajectories for a small subset of the training data and then perform imitation learning",
                "we perform imitation learning for 1 epoch",
            ),
            ("In the second stage, reinforcement learning is applied", "In the second stage, we apply PPO training"),
            (
                "we use the Selector as an auxiliary reward model for the Crawler",
                "we design a new session-level PPO",
                "auxiliary reward model in RL training for the Crawler",
            ),
        ),
        (
            (5, "The training process for the Crawler comprises", "is defined as"),
            (6, "Here, α is a reward coefficient", "coefficient of the value objective"),
            (7, "Crawler The training process involves", "PPO training data sampling"),
            (7, "To optimize training efficiency for the Crawler", "reward model during the Crawler training"),
            (2, "We optimize PaSa within the AGILE", "Effective training requires"),
            (2, "Although AutoScholarQuery only provides", "directly input into the LLM context"),
            (1, "We optimize PaSa using reinforcement learning", "conference publications"),
            (3, "Specifically, we design a novel session-level PPO", "long trajectories"),
            (7, "We sequentially trained the Selector and Crawler", "referred to as PaSa-7b"),
        ),
    ),
    Labelled(
        "What are the two agents of PaSa and what does each of them do?",
        PASA,
        (
            (
                "PaSa consists of two LLM agents",
                "consists of two LLM agents, Crawler and Selector",
                "the PaSa system consists of two LLM agents",
            ),
            (
                "the Crawler can autonomously collect relevant papers",
                "The crawler reads the user’s query",
                "the Crawler is designed to maximize the recall",
                "The Crawler processes the user query",
            ),
            (
                "The Selector carefully reads each paper",
                "The Selector reads each paper in the paper queue",
                "The selector conducts a thorough review",
                "the Selector emphasizes precision",
                "The Selector is an LLM agent that takes two inputs",
            ),
        ),
        (
            (2, "Figure 1: Architecture of PaSa", "requirements of the user query"),
            (4, "4.1 Overview", "meet the user’s needs"),
            (5, "4.2 Crawler", "outlined in Table 3"),
            (5, "If the token generated is [Search]", "abstract, and an outline of all sections and subsections"),
            (6, "4.3 Selector", "indicating whether the paper satisfies the query"),
            (7, "and (2) a rationale", "does not affect the Selector’s performance"),
            (1, "PaSa can autonomously make a series of decisions", "complex scholarly queries"),
            (3, "We introduce PaSa, a comprehensive and accurate", "navigate citation networks"),
        ),
    ),
    Labelled(
        "How does PaSa perform compared with Google-based search baselines?",
        PASA,
        (
            (
                "PaSa-7B surpasses the best Google-based baseline",
                "Against the best Google-based baseline",
                "PaSa-7b outperforms Google with GPT-4o by 37.78%",
                "PaSa-7B surpasses Google with GPT-4o by 37.78%",
            ),
            ("achieves a 34.05% improvement in Recall@20", "achieves an improvement of 33.80%, 38.83% and 42.64%"),
            (
                "PaSa significantly outperforms existing baselines",
                "PaSa-7b significantly outperforms all baselines",
                "PaSa-7b outperforms all baselines on AutoScholarQuery",
            ),
        ),
        (
            (1, "Despite being trained on synthetic data", "4.25% in precision"),
            (2, "Our experiments show that PaSa-7b", "4.25% in precision"),
            (3, "Although PaSa is trained solely on synthetic data", "and chatGPT"),
            (8, "5.3 Main results", "improvement in the recall"),
            (8, "For Google-based baselines, we evaluate recall", "for the final retrieved papers"),
        ),
    ),
    Labelled(
        "What is AutoScholarQuery and how was it built?",
        PASA,
        (
            (
                "AutoScholarQuery is a synthetic but high-quality dataset",
                "We build a synthetic but high-quality",
                "a synthetic dataset, AutoScholarQuery",
            ),
            (
                "we prompted GPT-4o (Hurst et al., 2024) to generate scholarly queries",
                "from the related work sections of papers published",
                "To construct AutoScholarQuery, we began by collecting all papers",
            ),
            ("comprises 33,551, 1,000, and 1,000 instances", "includes 33,511 / 1,000 / 1,000"),
            ("determining that 94.0% of the queries were qualified", "93.7% had corresponding papers"),
        ),
        (
            (3, "3.1 AutoScholarQuery", "deemed relevant and appropriate"),
            (2, "We build a synthetic but high-quality", "test split"),
            (2, "Although AutoScholarQuery only provides", "improve PaSa"),
            (1, "We optimize PaSa using reinforcement learning with a synthetic dataset", "conference publications"),
            (4, "Table 2: Statistics of AutoScholarQuery", "answer paper counts per query"),
        ),
    ),
    Labelled(
        "How was the RealScholarQuery benchmark constructed?",
        PASA,
        (
            (
                "a test dataset consisting of 50 real-world research queries",
                "It contains 50 real-world academic queries",
                "constructed RealScholarQuery, a dataset of actual academic queries paired with annotated papers",
            ),
            ("professional annotators reviewed all candidate papers", "annotators included professors"),
            ("we used multiple methods to retrieve additional papers", "we first manually gathered relevant papers"),
            ("we invited several AI researchers to use the system", "randomly sampled a subset of queries"),
        ),
        (
            (4, "3.2 RealScholarQuery", "only 50 instances"),
            (2, "To evaluate PaSa, besides the test set", "real-world scenarios"),
            (1, "Additionally, we develop RealScholarQuery", "realistic scenarios"),
        ),
    ),
    Labelled(
        "What challenges does reinforcement learning of the Crawler face and how are they addressed?",
        PASA,
        (
            (
                "sparse reward: The papers in AutoScholarQuery",
                "this could lead to sparse rewards during training",
                "challenges of the paper search task, including sparse rewards",
            ),
            (
                "long trajectories: The complete trajectory",
                "significant time required to sample a complete trajectory",
                "including sparse rewards and long trajectories",
            ),
            (
                "we define a session as a sub-trajectory",
                "design a new session-level PPO",
                "novel session-level PPO algorithm",
            ),
            ("we use the Selector as an auxiliary reward model",),
        ),
        (
            (2, "In addition, we design a new session-level PPO", "directly input into the LLM context"),
            (6, "However, it is important to note", "This term is scaled by the coefficient"),
            (3, "Specifically, we design a novel session-level PPO", "long trajectories"),
            (7, "To optimize training efficiency for the Crawler", "during the Crawler training"),
        ),
    ),
    Labelled(
        "What are counterfactual explanations?",
        XAI,
        (
            (
                "a counterfactual is an example with minimum deviation from the initial instance",
                "A counterfactual x ′ of an instance x is one with a dissimilar prediction",
            ),
            ("which smallest change could alter the outcome",),
            (
                "Counterfactuals create local (instance-level), actionable explanations",
                "Counterfactual explanations are useful because they are represented as chemical structures",
                "counterfactuals are “better” explanations because they are actionable and sparse",
            ),
            ("counterfactual generation can be thought of as a constrained optimization problem",),
        ),
        (
            (11, "Counterfactual explanations Counterfactual explanations can be found", "peripheral to counterfac"),
            (12, "tual explanations", "compared to other"),
            (21, "Counterfactual explanations are useful", "CF-GNNExplainer"),
            (6, "In Wellawatte et al. 9 we argue", "actionable and sparse"),
            (4, "For example, counterfactuals are local interpretations", "explain only a given instance"),
            (15, "This proves the advantage of using counterfactual explanations", "cross the BBB"),
        ),
    ),
    Labelled(
        "What is SHAP and how does it explain a prediction?",
        XAI,
        (
            ("SHAP is a model-agnostic feature attribution method",),
            ("It’s an additive feature contribution approach", "explanation model is a linear combination of binary"),
            (
                "Shapley values were proposed as a local explanation method",
                "each feature is assigned a fraction of the prediction value",
            ),
            ("Yet Shapley values are not actionable nor sparse",),
        ),
        (
            (9, "SHAP is a model-agnostic", "M is chosen accordingly"),
            (5, "We present an example evaluation of the SHAP", "changes the outcome"),
            (7, "Shapley Additive exPlanations (SHAP)", "layerwise relevance prorogation"),
        ),
    ),
    Labelled(
        "What are surrogate models for explaining black-box models?",
        XAI,
        (
            ("fit a self-explaining or interpretable model to the black box model",),
            (
                "acting as surrogate models (proxy models) due to their transparent nature",
                "Any of the self-explaining models detailed in the Self-explaining models section can be used",
            ),
            (
                "proposed a surrogate model method that aims to provide sparse",
                "The goal for LIME is to minimize the loss",
                "The most commonly used surrogate model based method is Locally Interpretable Model Explanations",
            ),
            ("one model per explanation is trained", "one surrogate model that explained the whole DL model"),
        ),
        (
            (10, "Surrogate models One approach", "ZZZ-end-of-page"),
            (11, "between original input", "maximizing simplicity"),
            (6, "Intrinsic models can be found in other XAI", "transparent nature"),
            (5, "Ribeiro et al. 35 proposed a surrogate model", "have high"),
            (22, "surrogate model to explain the black-box model", "GraphLIME87 method"),
        ),
    ),
    Labelled(
        "What is the difference between interpretability and explainability?",
        XAI,
        (
            ("interpretability of a model refers to the degree of human understandability",),
            ("interpretability is a passive characteristic of a model, whereas explainability is an active",),
            (
                "an explanation is extra information that gives the context and a cause",
                "An “explanation” is a description on why a certain prediction was made",
            ),
            ("Interpretability and explanation are often used interchangeably",),
        ),
        (
            (3, "Three terms highly associated with XAI", "We adopt the same nomenclature"),
            (4, "For example, counterfactuals are local interpretations", "post-hoc (extrinsic) or intrinsic"),
        ),
    ),
    Labelled(
        "How should explanations of a model be evaluated?",
        XAI,
        (
            ("the following attributes can be used to evaluate explanations",),
            ("evaluation of explanations is a difficult task",),
            (
                "Actionable. Is it clear how we could change the input features",
                "Does the explanation agree with the black box",
                "Does the explanation completely account for the prediction",
            ),
            ("the relative importance of each attribute may depend on the application",),
        ),
        (
            (5, "evaluation metric is necessary in XAI", "changes the outcome"),
            (4, "Often, what is a “good” explanation", "ZZZ-end-of-page"),
            (6, "We highlight that, evaluation of explanations", "application scenarios"),
        ),
    ),
    Labelled(
        "What are feature attribution methods?",
        XAI,
        (
            ("Feature attribution methods explain black box predictions by assigning each input feature",),
            ("Feature attributions provide local explanations",),
            (
                "Gradient based approaches are based on the hypothesis",
                "feature attribution approaches in the literature are gradient based methods",
            ),
            (
                "SHAP is a model-agnostic feature attribution method",
                "Shapley values were proposed as a local explanation method based on feature attribution",
            ),
        ),
        (
            (7, "Attribution methods Feature attribution methods", "ZZZ-end-of-page"),
            (8, "xi are used as our attributions", "ZZZ-end-of-page"),
            (9, "SHAP is a model-agnostic", "Similarity maps provide"),
        ),
    ),
)
END = "ZZZ-end-of-page"  # a region running to the end of its page


def region_texts(labelled: Labelled, page_text: dict[int, str]) -> list[tuple[int, str]]:
    """The normalised text of each labelled region (a region whose start is not on its page is
    an error in the labels: it raises)."""
    out = []
    for page, first, last in labelled.regions:
        text = norm(page_text[page])
        start = text.find(norm(first))
        if start < 0:
            raise ValueError(f"label region start not on p. {page}: {first!r}")
        end = len(text) if last == END else text.find(norm(last), start)
        if end < 0:
            raise ValueError(f"label region end not on p. {page}: {last!r}")
        out.append((page, text[start : end + len(norm(last)) if last != END else end]))
    return out


def facts_reached(labelled: Labelled, quotes: list[str]) -> list[bool]:
    """For each fact, whether one of the quotes states it."""
    qs = [norm(q) for q in quotes]
    return [any(norm(alt) in q for alt in fact for q in qs) for fact in labelled.facts]


CONTINUED_CHARS = 20  # a quote's part on the next page counts from this many characters


def addresses(labelled: Labelled, quote: str, page: int | None, regions: list[tuple[int, str]]) -> bool:
    """Whether a claim quoting `quote` (on `page`) addresses the question. A quote that runs on
    from the foot of `page` into a region opening the next page (a sentence joined across the
    page break) lies in that region when its continuation does."""
    q = norm(quote)
    if any(norm(alt) in q for fact in labelled.facts for alt in fact):
        return True
    if any(q and q in text and (page is None or p == page) for p, text in regions):
        return True
    return any(
        page is not None and p == page + 1 and any(text.startswith(q[k:]) for k in range(1, len(q) - CONTINUED_CHARS))
        for p, text in regions
    )


# ---- measuring (benchmarks/answer_quality.py, tests/integration/test_answer_quality.py) ----------------
OPENER = re.compile(
    r"^(?:This|These|That|Those|It|Its|They|Their|Such|Subsequently|Ultimately|Consequently|"
    r"Thus|Hence|Then|Among these|Of these|The latter|The former)\b(?!\s+(?:paper|work|study|"
    r"article|review|survey|perspective)\b)"
)
_MARKED = re.compile(r"(.+?)\s*\[(\d+(?:\s*,\s*\d+)*)\]")


def ask_answer(lab, question: str) -> tuple[str, list[tuple[str, int | None]]]:
    """The offline Ask answer as the Ask run builds it; its quoted sentences with their pages."""
    return offline_ask(lab, question, "page")


def offline_ask(lab, question: str, key: str, without_marks: bool = False) -> tuple[str, list[tuple[str, Any]]]:
    """The offline Ask answer as the Ask run builds it, and its quoted sentences each with its
    hit's `key` ("page", "document_id"); `without_marks`: the passages' superscript marks taken
    out first, as the offline run does."""
    from bayes_app.chat import agent, prompts
    from bayes_app.chat.library_search import without_marks as strip_marks
    from bayes_app.llm.offline import OfflineProvider, format_passages
    from bayes_app.llm.types import ChatRequest

    k = getattr(agent, "OFFLINE_TOP_K", agent.TOP_K)  # what the offline Ask run searches (main: TOP_K)
    hits = [h for h in agent.search_library(lab.sessions, lab.user_id, question, None, k) if not h.get("weak")]
    if without_marks:
        hits = strip_marks(lab.sessions, hits)
    numbered = [{**h, "n": i} for i, h in enumerate(hits, 1)]
    cap = agent.TOOL_RESULT_CHARS * k // agent.TOP_K
    system = (
        prompts.SYSTEM
        + "\n\n"
        + (prompts.PASSAGES.format(passages=format_passages(numbered)[:cap]) if numbered else prompts.NO_PASSAGES)
    )
    req = ChatRequest(
        model="offline", messages=[{"role": "system", "content": system}, {"role": "user", "content": question}]
    )
    text = asyncio.run(OfflineProvider().complete(req)).text
    of = {h["n"]: h.get(key) for h in numbered}
    # one bullet per passage ("- p. 5: sentence … sentence [3]", gaps marked by " … "); older answers:
    # "sentence [3] sentence [4]"
    quoted = [
        (part.strip(), of.get(int(m.group(2).split(",")[0])))
        for m in _MARKED.finditer(text)
        for part in re.sub(r"^\s*-\s+(?:p\.\s*\S+:\s+)?", "", m.group(1)).split(" … ")
    ]
    return text, quoted


def research(lab, question: str, embed) -> dict:
    from sqlmodel import select

    from bayes_app.llm.offline import OfflineProvider
    from bayes_app.models import Citation, MapNode
    from tests.support.mapquality import measure_map

    mid = lab.create_map(question)
    lab.run("build_map", mid, OfflineProvider, prompt=question)
    with lab.sessions() as db:
        claims = [n for n in db.exec(select(MapNode).where(MapNode.map_id == mid)) if n.kind == "claim"]
        cits = list(db.exec(select(Citation).where(Citation.map_id == mid)))
    by_node: dict[str, list] = {}
    for c in cits:
        by_node.setdefault(c.node_id, []).append((c.quote, c.page))
    m = measure_map(lab, mid, embed)
    return {
        "claims": [(n.title, by_node.get(n.id, [])) for n in claims],
        "duplicates": m["duplicates"],
        "themes": m["titles"],
    }


def measure_question(lab, q: Labelled, page_text: dict[int, str], embed) -> dict:
    """Ask and Research on one labelled question in a MapLab library, measured against its labels."""
    regions = region_texts(q, page_text)
    text, quoted = ask_answer(lab, q.question)
    r = research(lab, q.question, embed)
    claim_quotes = [qt for _, cs in r["claims"] for qt, _ in cs]
    relevant = [any(addresses(q, qt, pg, regions) for qt, pg in cs) for _, cs in r["claims"]]
    return {
        "question": q.question,
        "facts": len(q.facts),
        "ask_facts": sum(facts_reached(q, [s for s, _ in quoted])),
        "ask_answer": text,
        "ask_relevant": sum(addresses(q, s, pg, regions) for s, pg in quoted),
        "ask_sentences": len(quoted),
        "research_facts": sum(facts_reached(q, claim_quotes)),
        "claims": len(r["claims"]),
        "relevant_claims": sum(relevant),
        "openers": sum(bool(OPENER.match(t)) for t, _ in r["claims"]),
        "duplicates": r["duplicates"],
        "themes": r["themes"],
        "off_topic": [t[:100] for (t, _), ok in zip(r["claims"], relevant) if not ok],
        "claim_rows": [[t, ok] for (t, _), ok in zip(r["claims"], relevant)],
    }
