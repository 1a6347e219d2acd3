"""``opolyx-bots``: run a bot worker; ``opolyx-bots arena --games N --mode M``: the arena."""

from __future__ import annotations

import argparse
import sys

from opolyx_rules.modes import MODES

from opolyx_bots.styles import STYLES


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(
            "usage: opolyx-bots                  run a bot worker (settings from OPOLYX_*)\n"
            "       opolyx-bots arena --games N --mode M [--seats K] [--seed S] [--styles a,b]"
        )
        return
    if args and args[0] != "arena":
        print(f"opolyx-bots: unknown command {args[0]!r} (try --help)", file=sys.stderr)
        raise SystemExit(2)
    if not args:
        from opolyx_bots.worker import main as worker_main

        worker_main()
        return
    parser = argparse.ArgumentParser(
        prog="opolyx-bots arena",
        description="Play bot styles against each other and the rules library's simple "
        "policy; print win rates with 95%% confidence intervals.",
    )
    parser.add_argument("--games", type=int, default=100, help="games per table of results")
    parser.add_argument("--mode", choices=sorted(MODES), default="classic")
    parser.add_argument("--seats", type=int, default=4, help="seats per game (2-6)")
    parser.add_argument("--seed", type=int, default=1, help="first game seed")
    parser.add_argument(
        "--styles",
        default=",".join(STYLES),
        help="styles to test one by one against the simple policy (comma separated)",
    )
    options = parser.parse_args(args[1:])
    if not 2 <= options.seats <= 6 or options.games < 1:
        parser.error("--seats must be 2-6 and --games at least 1")
    styles = [s for s in options.styles.split(",") if s]
    unknown = [s for s in styles if s not in STYLES]
    if unknown:
        parser.error(f"unknown styles {unknown}; known: {', '.join(STYLES)}")

    from opolyx_bots.arena import run_arena, summary

    results = run_arena(options.mode, options.games, options.seats, options.seed, styles)
    for result in results:
        print("\n".join(result.lines()))
        print()
    print(summary(results))


if __name__ == "__main__":
    main()
