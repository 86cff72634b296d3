"""May this row be returned for this query? The one check every way a memory enters the candidates
runs on a store row: the routes' pool (:func:`memory_engine.retrieve.candidates.pool_routes`), the
conversation neighbours (:class:`memory_engine.retrieve.context.ConversationContext`) and the entity
hop (:class:`memory_engine.retrieve.hop.EntityHop`). Five refusals, in this order:

* another owner's row (:meth:`memory_engine.scope.Scope.owns`, seed 004: defence in depth, the store
  filter already isolates);
* a memory flagged at write for a planted instruction, when ``retrieval.exclude_flagged`` is on (it
  stays out of the context);
* what the assistant said unconfirmed, for a first-person question about the user
  (``QueryPlan.user_only``, :func:`memory_engine.retrieve.addressee.may_answer`);
* what the assistant offered and the user declined ("no thanks", "不用了"), for any query that does not
  refer to the assistant (``retrieval.declined_needs_addressee``).
* the assistant's own standing commitment the user did not accept ("From now on I'll answer in French"), for
  any query that does not refer to the assistant (``retrieval.commitment_needs_addressee``).

Pure: one frozen value per retrieval, no store reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..scope import Scope
from ..store.base import ScoredPayload
from .addressee import may_answer

__all__ = ["Admission"]


@dataclass(frozen=True)
class Admission:
    """The owner ``scope``, ``exclude_flagged`` (``retrieval.exclude_flagged``) and ``user_only``
    (``QueryPlan.user_only``) of one retrieval; :meth:`admits` is the check (module docstring)."""

    scope: Scope
    exclude_flagged: bool = False
    user_only: bool = False
    declined_out: bool = False
    commitment_out: bool = False

    def admits(self, p: ScoredPayload) -> bool:
        """True when row ``p`` may be returned: the scope's owner, not flagged (when excluded), not the
        assistant's unconfirmed word on a question about the user, and not a declined offer (when out)."""
        return (self.scope.owns(p) and not (self.exclude_flagged and p.payload.get("flagged"))
                and may_answer(p.payload, self.user_only, self.declined_out, self.commitment_out))
