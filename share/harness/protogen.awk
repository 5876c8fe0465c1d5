# protogen.awk: the protocol's names, from share/harness/protocol.tsv, for
# each side that uses them.  POSIX awk, so that a build needs no Python.
#
#   awk -v out=c  -f protogen.awk protocol.tsv             > lib/eval/harness.h
#   awk -v out=py -f protogen.awk protocol.tsv             > geakh/proto.py
#   awk -v out=man -f protogen.awk protocol.tsv PAGE.7     > PAGE.7.new
#
# out=man copies the page and replaces what lies between its lines
# `.\" protocol.tsv begin` and `.\" protocol.tsv end` with the tables.
BEGIN {
	FS = "\t"
	n = 0
	ngroups = split("OP REQ PART PLAN RESP ENDED INPHASE LIMIT LAYER MSG HELLO VERSIONS DEVICE BUILD " \
	    "BOX FILE JOB STATIC FINDING NONCE PROF STEP CASE RESULT SPENT TIMING VERDICT OOM ENV", order, " ")
	title["OP"] = "Operations (op)"
	title["REQ"] = "Keys of a request"
	title["PART"] = "Values of part"
	title["PLAN"] = "Keys of a plan"
	title["RESP"] = "Keys of a response"
	title["ENDED"] = "Values of status"
	title["INPHASE"] = "Values of phase"
	title["LIMIT"] = "Values of limit"
	title["LAYER"] = "Keys of a response's sandbox"
	title["MSG"] = "Messages of a job on its way, and geak-eval's answer"
	title["HELLO"] = "Keys of the greeting"
	title["VERSIONS"] = "Keys of the greeting's versions"
	title["DEVICE"] = "Keys of the greeting's device"
	title["BUILD"] = "Keys of the greeting's build"
	title["BOX"] = "Keys of the sandbox settings (start's sandbox)"
	title["FILE"] = "Files in a job's directory"
	title["JOB"] = "Keys of job.json"
	title["STATIC"] = "Keys of static.json"
	title["FINDING"] = "Keys of a finding"
	title["NONCE"] = "Key of every result file"
	title["PROF"] = "Keys of profile.json that geak-eval reads"
	title["STEP"] = "Keys of each process's entry in profile.json's steps"
	title["CASE"] = "Keys of a performance case (profile.json, timing.json) that geak-eval reads"
	title["RESULT"] = "Keys of result.json that geak-eval reads"
	title["SPENT"] = "Keys of result.json's and timing.json's spent that geak-eval reads"
	title["TIMING"] = "Keys of timing.json that geak-eval reads"
	title["VERDICT"] = "Keys of verdict.json"
	title["OOM"] = "Keys of oom"
	title["ENV"] = "Environment variables"
}

/^#/ || /^[ \t]*$/ {
	if (FILENAME == ARGV[1])
		next
}

FILENAME == ARGV[1] {
	if (NF != 7) {
		printf "protogen: %s:%d: %d fields, not 7\n", FILENAME, FNR, NF > "/dev/stderr"
		bad = 1
		exit 1
	}
	if ($1 in seen) {
		printf "protogen: %s:%d: %s named twice\n", FILENAME, FNR, $1 > "/dev/stderr"
		bad = 1
		exit 1
	}
	seen[$1] = 1
	p = $1
	sub(/_.*/, "", p)
	if (!(p in title)) {
		printf "protogen: %s:%d: %s: no such prefix\n", FILENAME, FNR, $1 > "/dev/stderr"
		bad = 1
		exit 1
	}
	n++
	name[n] = $1; key[n] = $2; type[n] = $3; unit[n] = $4
	writer[n] = $5; reader[n] = $6; meaning[n] = $7; prefix[n] = p
	next
}

# The page: copied, its generated part replaced.
out == "man" && /^\.\\" protocol\.tsv begin/ {
	print
	man_tables()
	skipping = 1
	next
}
out == "man" && /^\.\\" protocol\.tsv end/ {
	skipping = 0
}
out == "man" && !skipping {
	print
}

function c_header(    i, last) {
	print "/* harness.h: the names of the protocol between geak-eval and its Python"
	print " * harness, generated from share/harness/protocol.tsv by"
	print " * share/harness/protogen.awk: edit the table, not this file."
	print " * geak-harness(7) says what each means. */"
	print "#ifndef GEAK_HARNESS_H"
	print "#define GEAK_HARNESS_H"
	for (i = 1; i <= n; i++) {
		if (prefix[i] != last)
			printf "\n/* %s. */\n", title[prefix[i]]
		last = prefix[i]
		printf "#define GEAK_%-20s \"%s\"\n", name[i], key[i]
	}
	print ""
	print "#endif"
}

function py_module(    i, last) {
	print "\"\"\"The names of the protocol between geak-eval and this harness,"
	print "generated from share/harness/protocol.tsv by share/harness/protogen.awk:"
	print "edit the table, not this file.  geak-harness(7) says what each means.\"\"\""
	for (i = 1; i <= n; i++) {
		if (prefix[i] != last)
			printf "\n# %s.\n", title[prefix[i]]
		last = prefix[i]
		printf "%s = \"%s\"\n", name[i], key[i]
	}
	print ""
	print ""
	print "class ProtocolError(Exception):"
	print "    \"\"\"A message or file that breaks the protocol.\"\"\""
	print ""
	print ""
	print "def need(obj, name, where):"
	print "    \"\"\"obj[name], which the protocol says is there: a ProtocolError"
	print "    naming the key and where it is missing otherwise.\"\"\""
	print "    if not isinstance(obj, dict) or name not in obj:"
	print "        raise ProtocolError(f\"{where} has no {name!r}\")"
	print "    return obj[name]"
}

function roff(s) {
	gsub(/\\/, "\\e", s)
	return s
}

# Text lines of at most 72 bytes.
function wrap(s,    w, k, i, line) {
	k = split(s, w, " ")
	line = ""
	for (i = 1; i <= k; i++) {
		if (line != "" && length(line) + 1 + length(w[i]) > 72) {
			print line
			line = w[i]
		} else {
			line = line == "" ? w[i] : line " " w[i]
		}
	}
	if (line != "")
		print line
}

function man_tables(    g, i) {
	print ".Ss Names"
	print "Every name of the protocol, from"
	print ".Pa share/harness/protocol.tsv ,"
	print "with its type (and unit) and who writes and reads it"
	print "(eval: geak-eval; harness: the Python side).";
	print "The C side names each as"
	print ".Dv GEAK_ Ns Ar NAME"
	print "in"
	print ".Pa lib/eval/harness.h ,"
	print "the Python side as"
	print ".Ar NAME"
	print "in"
	print ".Pa share/harness/geakh/proto.py ;"
	print "both are generated from the table."
	for (g = 1; g <= ngroups; g++) {
		print ".Pp"
		print title[order[g]] ":"
		print ".Bl -tag -width Ds -compact"
		for (i = 1; i <= n; i++) {
			if (prefix[i] != order[g])
				continue
			printf ".It Li %s\n", key[i]
			printf "%s; %s%s; %s to %s:\n", name[i], type[i], unit[i] == "-" ? "" : ", " unit[i],
			    writer[i], reader[i]
			wrap(roff(meaning[i]))
		}
		print ".El"
	}
}

END {
	if (bad)
		exit 1
	if (out == "c")
		c_header()
	else if (out == "py")
		py_module()
	else if (out != "man") {
		print "protogen: out is c, py or man" > "/dev/stderr"
		exit 1
	}
}
