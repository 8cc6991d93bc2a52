"""Trust: who may write what, the review inbox, checksums, conflicts and scenes.

Doors reach these through ``memory_layer.api``. ``visibility`` (what agents may see)
is cheap to import because the hook path needs it; the other modules are imported
by the use cases that run them.
"""
