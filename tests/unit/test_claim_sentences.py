"""Which sentences may become claims (maps/sentences.py): the junk the issue found in maps —
reference entries, author blocks, figure text, equations, prompt listings — is refused with a
reason; real sentences pass, cleaned of headings and superscript citation numbers."""

from __future__ import annotations

import pytest

from bayes_app.agents.naming import noun_phrases
from bayes_app.maps.sentences import (
    candidate_sentences,
    claim_problem,
    clean_sentence,
    is_sentence_case_heading,
    looks_like_reference_list,
    role_allows_claims,
    split_sentences,
)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "(57) Sheridan, R. P. Interpretation of QSAR Models by Coloring Atoms According to Changes in Predicted "
            "Activity: How Robust Is It?",
            "reference_entry",
        ),
        ("Journal of Molecular Graphics and Modelling 2018, 84, 96–108.", "reference_entry"),
        ("Research synthesis methods, 11(2):181–217.", "reference_entry"),
        (
            "Cheng, T.; Gindulyte, A.; He, J.; He, S.; Li, Q. PubChem in 2021: new data content and improved web "
            "interfaces.",
            "reference_entry",
        ),
        ("{hyc,huangguanhua,fpy,linyuan.0}@bytedance.com, weinan@math.pku.edu.cn", "contact_or_affiliation"),
        ("†Department of Chemistry, University of Rochester, Rochester, NY, 14627", "contact_or_affiliation"),
        (
            "Crawler Paper Queue User Query Selector User Query Select / Drop [Search] [Expand] [Stop] Figure 1: "
            "Architecture of PaSa.",
            "figure_text",
        ),
        ("Queries: Table 10: The prompt for GPT-4o to generate search queries from the user query.", "figure_text"),
        (
            "Equation 3 is an approximation and gives contributions with an expectation term as "
            "ϕ0 + P i=1 ϕi(⃗x) = ˆf(⃗x).",
            "equation_or_numbers",
        ),
        ("0.6563 0.5798 PaSa-7b-ensemble 0.7503 0.4938 0.6488 0.7281 0.6877 0.5986 Table 6: Results.", "figure_text"),
        (
            "You are an elite researcher in the field of AI, please generate some mutually exclusive queries.",
            "prompt_listing",
        ),
        (
            "[User’s Query]: {user_query} [Generated Search Query]: Table 13: The prompt for search query paraphrase.",
            "prompt_listing",
        ),
        ("Generate a search query suitable for Google based on the given academic paper-related query.", "instruction"),
        ("Which academic search systems are suitable for systematic reviews or meta-analyses?", "question"),
        ("The prompt for search query paraphrase.", "no_verb"),
        ("the explanation agrees with the black box model and its training data.", "fragment"),
        ("PaSa is trained.", "too_short"),
    ],
)
def test_junk_is_refused_with_a_reason(text, reason):
    assert claim_problem(text) == reason


@pytest.mark.parametrize(
    "text",
    [
        "PaSa-7B surpasses the best Google-based baseline, Google with GPT-4o, by 37.78% in recall@20 and 39.90% "
        "in recall@50.",
        "The agent’s state is defined by the current LLM context and the paper queue.",
        "Figure 1: Architecture of PaSa, in which the Crawler collects papers and the Selector reads them.",
        "Counterfactual explanations are useful because they are represented as chemical structures.",
        "An “explanation” is a description on why a certain prediction was made.9,28",
    ],
)
def test_real_sentences_pass(text):
    assert claim_problem(text) is None


@pytest.mark.parametrize(
    "text",
    [  # results as biomedical abstracts report them (SciFact rationale sentences): prose, not equations
        "RESULTS At 12 weeks, 53.0% of the combination therapy group achieved prolonged smoking abstinence "
        "compared with 43.2% in varenicline monotherapy (odds ratio [OR], 1.49; 95% CI, 1.05-2.12; P = .03).",
        "Morphine use over 6 hours was significantly less in the INO group (mean cumulative use, 0.29 vs 0.44 "
        "mg/kg; P =.03) but was not different over 4 hours (0.26 vs 0.32 mg/kg; P =.21).",
        "The group of other antidepressants was associated with the highest adjusted hazard ratios for all cause "
        "mortality (1.66, 1.56 to 1.77), attempted suicide (5.16, 3.90 to 6.83), stroke (1.37, 1.22 to 1.55), "
        "fracture (1.64, 1.46 to 1.84), and epilepsy (2.24, 1.60 to 3.15).",
        "Ascorbic-acid levels were undetectable or markedly reduced in the blood and tissues of Slc23a1−/− mice.",
        "Women with low AMH values (<0.7 ng/mL [n = 84]) did not have a significantly different probability of "
        "conceiving.",
        "TNF-α and IL-1β levels rose to 12.4 ± 2.1 pg/mL in CD4+ cells treated with 5 μg of the compound.",
        # a hazard ratio per group, the commas between them no numbers of a table row
        "The HR for light smokers was 0.44 (95% CI, 0.35-0.56); for quitters, HR 0.50 (95% CI, 0.36-0.69), for "
        "stable ex-smokers, HR 0.17 (95% CI, 0.13-0.23), and for never smokers, HR 0.09 (95% CI, 0.06-0.13).",
        # P values written with a power of ten
        "The DGKK variant was associated with hypospadias in the Swedish sample, P = 2.6 × 10−8, and in the Dutch "
        "one, P = 2.7 × 10−6, as in the discovery sample.",
    ],
)
def test_results_reported_with_statistics_pass(text):
    assert claim_problem(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "The loss is defined as L = −log p(y | x) + λ‖θ‖ for every training pair.",
        "We obtain the bound ϕ0 + ϕ1 ≤ 2 and the gradient ∇f = 0 at the optimum.",
        "PaSa-7b reaches 0.6556 0.1476 0.4210 0.5123 0.3311 0.2274 on the six subsets.",
        "Recall reaches 0.6556 , 0.1476 , 0.4210 , 0.5123 , 0.3311 and 0.2274 × 10 on the six subsets.",
    ],
)
def test_equations_and_table_rows_stay_refused(text):
    assert claim_problem(text) in ("equation_or_numbers", "table_numbers")


def test_headings_and_superscripts_are_cut_off_verbatim():
    raw = (
        "results for complex queries.\r\n5 Experiments\r\n5.1 Experimental Setting\r\nWe sequentially trained "
        "the Selector and Crawler.\r\nSelector The Selector was fine-tuned using the training dataset."
    )
    assert candidate_sentences(raw) == [
        "results for complex queries.",
        "We sequentially trained the Selector and Crawler.",
        "The Selector was fine-tuned using the training dataset.",
    ]
    assert (
        clean_sentence("5.4 Ablation study We perform ablation studies in Table 8.")
        == "We perform ablation studies in Table 8."
    )
    assert (
        clean_sentence("LLM Agents LLM Agents combine LLMs with memory and planning.")
        == "LLM Agents combine LLMs with memory and planning."
    )
    assert (
        clean_sentence("44,46 SHAP has been popularly used in explaining models.")
        == "SHAP has been popularly used in explaining models."
    )
    assert split_sentences("It was made.9,28 Interpretability is debated. See Fig. 3 for e.g. details.") == [
        "It was made.9,28",
        "Interpretability is debated.",
        "See Fig. 3 for e.g. details.",
    ]


def test_reference_lists_are_recognised_without_roles_and_roles_decide_when_known():
    refs = (
        "Andres M Bran, Sam Cox, and Philippe Schwaller. 2023.\r\nChemcrow: Augmenting large-language models "
        "with\r\nchemistry tools. arXiv preprint arXiv:2304.05376.\r\nGuangyao Chen, Siwei Dong. 2023. "
        "Autoagents: A framework for automatic\r\nagent generation. arXiv preprint arXiv:2309.17288.\r\n"
        "Xiang Deng, Yu Gu. 2024.\r\nMind2web: Towards a generalist agent for the web.\r\nAdvances in Neural "
        "Information Processing Systems,\r\n36."
    )
    body = (
        "We optimize PaSa within the AGILE, a reinforcement learning (RL) framework for LLM agents (Feng et al., "
        "2024). AutoScholarQuery includes 33,511 query-paper pairs in the training split."
    )
    assert looks_like_reference_list(refs)
    assert not looks_like_reference_list(body)
    assert role_allows_claims("body")
    assert role_allows_claims("caption")
    assert role_allows_claims(None)
    assert not any(
        role_allows_claims(r)
        for r in ("reference", "front_matter", "figure", "equation", "header_footer", "heading", "footnote")
    )


def test_noun_phrases_are_tagged_noun_runs_not_verbs_or_citations():
    phrases = [
        p
        for t in (
            "PaSa-7b surpasses PaSa-GPT-4o in recall.",
            "Academic queries require deep search.",
            "They use SELFIES106 molecular representations.",
        )
        for p in noun_phrases(t)
    ]
    assert "Academic queries" in phrases
    assert "deep search" in phrases
    assert "molecular representations" in phrases
    assert not any("surpasses" in p or "SELFIES106" in p or " and " in p for p in phrases)
    # an infinitive opens a verb phrase, not a theme name: "To evaluate PaSa …"
    phrases = noun_phrases("To evaluate PaSa, we constructed RealScholarQuery.") + noun_phrases(
        "We aim to construct benchmarks."
    )
    assert "PaSa" in phrases
    assert not any(p.lower().startswith(("evaluate", "construct")) for p in phrases)
    assert "argue" not in {p.lower() for p in noun_phrases("In earlier work we argue that counterfactuals help.")}


def test_sentence_case_headings_are_cut_off_but_wrapped_lines_are_not():
    raw = (
        "such models are hard to trust.\r\nSolubility prediction\r\nSmall molecule solubility prediction is a\r\n"
        "classic task in chemistry and the models are\r\ntrained on measured data."
    )
    assert candidate_sentences(raw) == [
        "such models are hard to trust.",
        "Small molecule solubility prediction is a classic task in chemistry and the models are trained on measured "
        "data.",
    ]
    # the heading opening a passage, a line wrapped inside a sentence, and an open ending
    assert is_sentence_case_heading("Surrogate models", "", "One approach to explain black box predictions is")
    assert not is_sentence_case_heading("Google Scholar", "PaSa outperforms baselines on", "Scholar and Google with")
    assert not is_sentence_case_heading("Hypothesis for", "", "Multimodal Model Scaling Laws")
    assert not is_sentence_case_heading("ChatGPT (search-enabled", "", "GPT-4o), and Google paired with GPT-4o for")
    assert not is_sentence_case_heading("Counterfactuals", "They work.", "are sparse and actionable explanations here.")


def test_an_answer_never_opens_with_a_heading_its_passage_ran_in():
    from bayes_app.llm.offline import Passage, select_sentences

    text = (
        "Attribution methods Feature attribution methods explain black box predictions by assigning each "
        "input feature a numerical value. Solubility prediction The model predicts the solubility of molecules."
    )
    picked = [s for s, _ in select_sentences("What are feature attribution methods?", [Passage(1, text)], 3)]
    assert picked[0].startswith("Feature attribution methods explain black box predictions")
    assert all(not s.startswith(("Attribution methods", "Solubility prediction")) for s in picked)
    # a sentence whose first words merely recur is left alone
    assert clean_sentence("Google Scholar and Google Search are engines we use.").startswith("Google Scholar")
