"""The analysis: source text in, findings (with fixes and evidence) out. No LSP imports here."""

from pallas_ls.core.engine import analyse, hover_at
from pallas_ls.core.model import Config, Edit, Finding, Fix, Related, Span

__all__ = ["Config", "Edit", "Finding", "Fix", "Related", "Span", "analyse", "hover_at"]
