# kvbench.1 from the binary's own --help of each subcommand, so the man page cannot drift
# from the CLI. Usage: cmake -DKVBENCH=path -DOUT=kvbench.1 -DVERSION=x.y.z -P make_manpage.cmake
execute_process(COMMAND ${KVBENCH} --help OUTPUT_VARIABLE main RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${KVBENCH} --help failed (${rc})")
endif()
set(text "${main}")
foreach(sub run bench list ops golden check verify coverage shrink devices)
  execute_process(COMMAND ${KVBENCH} ${sub} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${KVBENCH} ${sub} --help failed (${rc})")
  endif()
  string(APPEND text "\n.fi\n.SH \"KVBENCH ${sub}\"\n.nf\n${help}")
endforeach()
string(REPLACE "${KVBENCH}" "kvbench" text "${text}")  # the build path of the binary
# roff: a backslash is written \e, and a line may not start with a period or an apostrophe.
string(REPLACE "\\" "\\e" text "${text}")
string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" text "${text}")
string(REPLACE "\n\\&.fi\n\\&.SH" "\n.fi\n.SH" text "${text}")
string(REGEX REPLACE "\n\\\\&(\\.nf|\\.fi)" "\n\\1" text "${text}")
file(WRITE ${OUT} ".TH KVBENCH 1 \"\" \"kvbench ${VERSION}\" \"User Commands\"\n.SH NAME\nkvbench \\- reference-and-conformance testbench for KV-cache and attention kernels\n.SH SYNOPSIS\n.nf\n${text}\n.fi\n.SH SEE ALSO\nThe specs in /usr/share/doc/kvbench/specs and the case suite in /usr/share/kvbench/cases.\n")
