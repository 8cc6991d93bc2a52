"""Team memory: the rules shared by the team server and its clients.

The server (``api.team_server`` over ``storage.pg``, served by ``team_http``) keeps one
reviewed memory per project on PostgreSQL + pgvector; clients (``api.team``) pull its
approved memories into the local store as read-only rows, so hooks never wait on the
network. This package holds what both sides agree on: roles, scopes and tokens
(``access``), and the HTTP client (``client``).
"""
