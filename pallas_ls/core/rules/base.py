"""What every rule gets: the parsed module, the evaluator and the kernel sites."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pallas_ls.core.kernels import KernelFinder, KernelSite
from pallas_ls.core.model import Config, raise_if_cancelled
from pallas_ls.core.resolve import ModuleInfo
from pallas_ls.core.values import Evaluator

LATEST = (99, 0, 0)


@dataclass
class RuleContext:
    """What a rule gets for one module: its parse, the evaluator and the kernel sites."""

    module: ModuleInfo
    evaluator: Evaluator
    finder: KernelFinder
    sites: list[KernelSite]
    config: Config
    # Results kept between analyses of the same document (None: no reuse).
    cache: dict[str, Any] | None = None
    # Polled by long loops; True means: stop, raise AnalysisCancelled.
    cancelled: Callable[[], bool] | None = None

    def check_cancelled(self) -> None:
        raise_if_cancelled(self.cancelled)

    @property
    def jax_version(self) -> tuple[int, ...]:
        return self.config.jax_version or LATEST

    @property
    def jax_version_text(self) -> str:
        v = self.config.jax_version
        return ".".join(map(str, v)) if v else "latest"
