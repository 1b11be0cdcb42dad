# Writes a C++ header holding a text file as a raw string literal (the timeline's script, so
# the pages it goes into fetch nothing). Run with -DIN=file -DOUT=header -DNAME=identifier.
file(READ "${IN}" text)
string(FIND "${text}" ")lic_embed\"" bad)
if(NOT bad EQUAL -1)
  message(FATAL_ERROR "${IN} holds the raw string's delimiter )lic_embed\"")
endif()
file(WRITE "${OUT}.tmp" "#pragma once\n// Generated from ${IN} by cmake/embed_text.cmake: do not edit.\nnamespace lic::reports {\ninline constexpr const char* ${NAME} = R\"lic_embed(${text})lic_embed\";\n}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
