"""Claude Code hooks: event JSON on stdin in, facts for the agent on stdout out.

``python -m memory_layer.hooks <EventName>`` (what ``hooks/run`` starts) and
``memory-layer hook <EventName>`` are the same door: ``main.run``. It parses
stdin once into an ``events.Event``, asks the warm engine to handle it, and
handles it in-process keyword-only when the engine does not answer in time.
Every failure is logged to ``logs/hooks.log`` and the hook still exits 0.
"""
