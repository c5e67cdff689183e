#!/usr/bin/env bash
# Fifteenth session: never-executed code in the epilogue (.device/v_presence) cost the two-warpgroup kernels 3.6-5.4%
# (ab-code-presence.txt). The same with the roles' source order flipped, which puts the producer's loop first in SASS
# and the epilogue after both hot loops (.device/v_flip, .device/v_presence_flip): is it where the code lands?
scripts/ab_headers.sh .device/v_flip,.device/v_presence,.device/v_presence_flip 3 4096x2048x7168 4096x512x32768 4096x7168x4096 wgrad:4096x7168x4096
