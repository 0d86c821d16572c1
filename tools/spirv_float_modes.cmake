# Checks that the SPIR-V module IN declares the float controls every kvbench kernel relies on,
# for 32-bit floats: SignedZeroInfNanPreserve and RoundingModeRTE (specs/runtime.md, "Inf
# and NaN" and "Rounding to nearest even"), and writes it to OUT. glslang 12 keeps one
# operand list per execution mode, so a module that also declares RoundingModeRTE for 16
# bits (shaders/quant_f16.glsl) comes out with the 16-bit one only: the 32-bit declaration
# is added back here (spirv-dis, one OpExecutionMode line, spirv-as with the same ids,
# spirv-val). Any other module without both fails the build, naming it.
# Usage: cmake -DIN=x.spv.raw -DOUT=x.spv -DSPIRV_DIS=... -DSPIRV_AS=... -DSPIRV_VAL=... -P this
execute_process(COMMAND ${SPIRV_DIS} --raw-id ${IN} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spirv-dis failed on ${IN}")
endif()
get_filename_component(name ${OUT} NAME)
if(NOT text MATCHES "OpExecutionMode %[0-9]+ SignedZeroInfNanPreserve 32\n")
  message(FATAL_ERROR "${name}: no SignedZeroInfNanPreserve 32 (include shaders/float_controls.glsl first)")
endif()
if(text MATCHES "OpExecutionMode %[0-9]+ RoundingModeRTE 32\n")
  file(COPY_FILE ${IN} ${OUT})
  return()
endif()
if(NOT text MATCHES "OpExecutionMode (%[0-9]+) RoundingModeRTE 16\n")
  message(FATAL_ERROR "${name}: no RoundingModeRTE 32 (include shaders/float_controls.glsl first)")
endif()
set(main ${CMAKE_MATCH_1})
string(REPLACE "OpExecutionMode ${main} RoundingModeRTE 16\n"
               "OpExecutionMode ${main} RoundingModeRTE 16\nOpExecutionMode ${main} RoundingModeRTE 32\n" text "${text}")
file(WRITE ${OUT}.txt "${text}")
execute_process(COMMAND ${SPIRV_AS} --preserve-numeric-ids --target-env vulkan1.1 -o ${OUT} ${OUT}.txt
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spirv-as failed on ${OUT}.txt")
endif()
execute_process(COMMAND ${SPIRV_VAL} --target-env vulkan1.1 ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT})
  message(FATAL_ERROR "spirv-val rejects ${OUT} after RoundingModeRTE 32 was added")
endif()
file(REMOVE ${OUT}.txt)
