"""What every optional section of the plan (ldd, locality, nat, lexcons, systems) shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SectionPlan:
    """A config section that may be absent: ``section`` is ``None`` then, and the stage
    contributes no targets."""

    section: dict[str, Any] | None

    @property
    def enabled(self) -> bool:
        return self.section is not None
