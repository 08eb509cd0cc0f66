#!/bin/sh
# Include arrows between libferry's layers go one way: lib/ctrl may
# include lib/io (the manifest), lib/io never includes lib/ctrl, and
# lib/util (the byte cursor, path rules) includes neither.
lib=${1:?usage: layers.sh LIBDIR}
bad=$(grep -n '#include "ctrl/' "$lib"/io/*.[ch];
      grep -n '#include "\(ctrl\|io\)/' "$lib"/util/*.[ch])
if [ -n "$bad" ]; then
	echo "an include against the arrow ctrl -> io -> util:"
	echo "$bad"
	exit 1
fi
