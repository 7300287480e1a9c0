"""The page's glossary: the few words a procurement reader may not know (TP, KV cache, TTFT, ITL,
replica, batch, percentile), each said plainly, and a linker that turns the first use of each on
the page into a link to its entry. Sections are built in page order, each passing its prose
through the same :class:`Linker`, so "first use" is the first in reading order."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markupsafe import Markup, escape


@dataclass(frozen=True)
class Term:
    id: str
    term: str
    meaning: str
    pattern: str  # where the term is used in the page's prose

    @property
    def anchor(self) -> str:
        return f"term-{self.id}"


TERMS = (
    Term("replica", "Replica",
         "One running copy of the model, on one GPU or on a TP group of GPUs. Replicas serve "
         "requests independently; spare replicas are kept beyond what the peak needs, so one "
         "can fail or be updated.", r"\breplicas?\b|\bcop(?:y|ies) of the model\b"),
    Term("tp", "TP (tensor parallelism)",
         "One copy of the model split across several GPUs of one server that work on every "
         "token together: TP 4 means each copy runs on 4 GPUs. It is needed when the model "
         "does not fit one GPU, and makes each token faster.", r"\bTP\b"),
    Term("batch", "Batch",
         "How many requests one copy of the model serves at once. A larger batch serves more "
         "requests per GPU but makes every token a little slower, so the planner takes the "
         "largest batch that still meets the ITL target.",
         r"\bbatch\b|\brequests at once\b"),
    Term("kv-cache", "KV cache",
         "The memory each request in progress keeps on the GPU: its prompt and the tokens "
         "generated so far, held as the model's keys and values. It grows with context length "
         "and limits how many requests fit at once.", r"\bKV(?: cache)?\b"),
    Term("ttft", "TTFT (time to first token)",
         "From a request's arrival to its first output token: any wait in the queue, then "
         "reading the prompt (prefill). What a user feels as responsiveness.",
         r"\bTTFT\b|\b[Tt]ime to first token\b"),
    Term("itl", "ITL (inter-token latency)",
         "The gap between two output tokens once the answer streams: 20 ms is 50 tokens per "
         "second, faster than anyone reads.", r"\bITL\b|\b[Ii]nter-token latency\b"),
    Term("percentile", "Percentile (p95)",
         "A target at p95 holds for 95 % of tokens or requests; the slowest 5 % may take "
         "longer. The mean (the average) is shown beside it.",
         r"\bp\d\d(?:\.\d+)?\b|\bpercentile\b"),
)


class Linker:
    """Links the first use of each glossary term, over every text passed through it."""

    def __init__(self, terms: tuple[Term, ...] = TERMS) -> None:
        self.terms = terms
        self.linked: set[str] = set()

    def __call__(self, text: str) -> Markup:
        found: list[tuple[int, int, Term]] = []
        for term in self.terms:
            if term.id in self.linked:
                continue
            match = re.search(term.pattern, text)
            if match and not any(s < match.end() and match.start() < e for s, e, _ in found):
                found.append((match.start(), match.end(), term))
        out, last = [], 0
        for start, end, term in sorted(found, key=lambda f: f[0]):
            self.linked.add(term.id)
            out.append(str(escape(text[last:start])))
            out.append(f'<a class="term" href="#{term.anchor}">{escape(text[start:end])}</a>')
            last = end
        out.append(str(escape(text[last:])))
        return Markup("".join(out))
