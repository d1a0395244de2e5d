#!/usr/bin/env bash
# RoboCup competition kill script: stops every team started by start.sh from here.
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/.team_*.pid; do
  [ -e "$f" ] || continue
  pid=$(cat "$f")
  team=$(basename "$f" .pid); team=${team#.team_}
  kill -INT "$pid" 2>/dev/null
  for _ in $(seq 80); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  # Players the runner could not stop (it was killed itself): by team name only.
  pkill -KILL -f "robocup3d_tools.player .*--team $team( |$)" 2>/dev/null
  rm -f "$f"
done
exit 0
