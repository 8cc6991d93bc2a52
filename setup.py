"""Only the package list, which pyproject.toml cannot express.

pyproject's ``packages.find`` cannot add the top-level ``web/`` folder as
``memory_layer.web`` (package-dir in pyproject.toml maps it), and a fixed list
would silently drop every package added later. So: every ``memory_layer*``
package on disk, plus the dashboard and its two data folders. The data folders are
listed as (namespace) packages because setuptools warns about, and will one day
drop, data inside a folder that is importable but not a listed package.
"""

from setuptools import find_namespace_packages, setup

# Namespace discovery, as pyproject's packages.find did: memory_layer/models holds data.
found = find_namespace_packages(include=["memory_layer*"], exclude=["*__pycache__*"])
WEB = ["memory_layer.web", "memory_layer.web.templates", "memory_layer.web.static"]
setup(packages=[*found, *WEB])
