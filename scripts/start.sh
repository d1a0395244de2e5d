#!/usr/bin/env bash
# RoboCup competition start script: start.sh <host> <port> [team name]
# Starts our 11 players on rcssserver3d (the league's SimSpark setup) and returns.
set -eu
host=${1:-127.0.0.1}
port=${2:-3100}
team=${3:-robocup3d}
here=$(cd "$(dirname "$0")" && pwd)
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$(( (port % 100) + 1 ))}
mkdir -p "$here/logs"
nohup robocup3d team --server simspark --host "$host" --port "$port" --team "$team" --no-raw \
  --log-dir "$here/logs" > "$here/logs/team_${team}.log" 2>&1 &
echo $! > "$here/.team_${team}.pid"
echo "started team $team (pid $(cat "$here/.team_${team}.pid")) on $host:$port"
