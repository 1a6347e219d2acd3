"""``opolyx-progression``: run one progression instance (configuration from ``OPOLYX_*``)."""

from opolyx_progression.app import main

if __name__ == "__main__":
    main()
