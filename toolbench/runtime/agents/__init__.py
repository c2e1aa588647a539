"""Sub-agents, gathered behind `AgentsService` (`bench.agents`): what the agent tools
(`tools/agents.py`, through `tools/agents_port.py`) reach, with the pure rules in `core/agents.py`.

    service.py       AgentsService: tasks, delegation, await, handoff, the message bus
    roster.py        the agent directory: templates and named agents, their children
    roster_store.py  the durable roster file (`.toolbench/agents/roster.json`)
    drive.py         a child's loop: rounds of its model until it returns
    loop.py          models as the child loop takes them (adapters or plain callables)
"""

from .service import AgentSpec, AgentsService

__all__ = ["AgentSpec", "AgentsService"]
