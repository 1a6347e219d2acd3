"""``opolyx-chat``: run one chat instance (configuration from ``OPOLYX_*``)."""

from opolyx_chat.app import main

if __name__ == "__main__":
    main()
