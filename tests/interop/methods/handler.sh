#!/bin/sh
# tests/interop/methods/handler.sh: the method owner of the interop run
# (run.sh starts `uabroker methods --exec` with it; docs/feed.md
# "Methods"): $1 is the method's NodeId, $2... its input arguments in the
# feed's value syntax, $UABROKER_OBJECT the object's NodeId.  Each line
# printed is an output argument; a first line status=NAME sets the status.
#
# The model's Start(Speed Double) -> Started Boolean: a negative speed is
# BadOutOfRange, any other starts the pump.
case "$1" in
*Start|*i=7001)
    case "$2" in
    -*) echo status=BadOutOfRange ;;
    *)  echo true ;;
    esac ;;
*)  echo status=BadNotImplemented ;;
esac
