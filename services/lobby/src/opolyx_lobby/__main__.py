"""``opolyx-lobby``: run one lobby instance (configuration from ``OPOLYX_*``)."""

from opolyx_lobby.app import main

if __name__ == "__main__":
    main()
