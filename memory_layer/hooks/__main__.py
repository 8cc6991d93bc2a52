"""``python -m memory_layer.hooks <EventName>``: what ``hooks/run`` starts."""

import sys

from memory_layer.hooks.main import main

if __name__ == "__main__":
    sys.exit(main())
