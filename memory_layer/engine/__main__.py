"""``python -m memory_layer.engine``: run the engine in the foreground (hooks start it
detached through ``lifecycle.spawn``)."""

import sys

from memory_layer.engine.server import serve

if __name__ == "__main__":
    sys.exit(serve())
