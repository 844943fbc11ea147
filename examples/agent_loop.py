"""An agent's memory loop: store, retrieve, report an outcome, correct, let time pass.

Run it from any directory (it writes ``agent-memory.db`` there):

    python examples/agent_loop.py

Standard library and graphonomous only.  A ManualClock moves time by hand, so the run is
the same every time: a stored fact, a superseding one, a correction, and an episode that
fades after its tier's time without use and is brought back.
"""

from __future__ import annotations

from pathlib import Path

from graphonomous import Graphonomous
from graphonomous.clock import ManualClock

DB = Path("agent-memory.db")


def main() -> None:
    DB.unlink(missing_ok=True)  # a fresh memory on every run
    clock = ManualClock("2026-03-02T09:00:00Z")
    with Graphonomous(DB, clock=clock) as g:
        # Store: facts, a procedure and the link between them.
        g.store_node("Pump P-3 overheats when the seal of valve V-12 wears out", node_id="cause")
        g.store_node(
            "Fix an overheating P-3: close valve V-12, replace its seal, restart the pump",
            node_type="procedural",
            node_id="fix",
        )
        g.store_node("Deployed release 4.2 to staging", node_type="episodic", node_id="deploy")
        g.store_edge("fix", "cause", "resolves", strength=0.8)
        print(f"stored: {g.graph_stats()['node_count']} nodes")

        # Retrieve: ranked context and the routing decision.
        hits = g.retrieve_context("why does pump P-3 overheat?", limit=3)
        top = hits["results"][0]
        print(f"retrieved: {top['node_id']} (score {top['score']:.3f})")
        print(f"routing: {hits['topology']['routing']}")

        # Report the outcome of acting on what was retrieved.
        used = [r["node_id"] for r in hits["results"][:2]]
        outcome = g.learn_from_outcome(
            "ticket-1-answer", "success", 0.9, used, evidence_type="human", signal_id="ticket-1"
        )
        for update in outcome["updates"]:
            print(
                f"outcome {outcome['status']}: {update['node_id']} confidence "
                f"{update['confidence_before']:.2f} -> {update['confidence_after']:.2f}"
            )

        # A correction: a new node supersedes the wrong one, whose confidence drops.
        fix = g.learn_from_feedback(
            "cause",
            "correction",
            correction="Pump P-3 overheats when valve V-12 loses pressure through a worn seal",
        )
        print(
            f"correction: confidence {fix['confidence_before']:.2f} -> "
            f"{fix['confidence_after']:.2f}"
        )

        # Time: what fades unless used, then ten days pass.
        forecast = g.fade_forecast(days=10)
        print(f"fades within 10 days: {forecast['by_type']}")
        for item in forecast["fading"]:
            if item["node_id"] == "deploy":
                print(f"deploy ({item['timescale']} tier) fades at {item['fades_at']}")
        clock.advance(days=10)
        g.run_consolidation()
        faded = g.get_node("deploy", include_forgotten=True)["node"]["forgotten_at"] is not None
        print(f"after 10 days: deploy faded = {faded}")
        restored = g.restore_node("deploy", reason="still relevant")["restored"]
        print(f"restored: {restored}")
        print(f"now: {g.now()}")


if __name__ == "__main__":
    main()
