/* module_marker.h — how a TMPI module is recognised.  tmpicc links libtmpi_module.a, which puts
 * TMPI_MODULE_MAGIC into an ELF section named TMPI_MODULE_SECTION and exports it as the symbol
 * tmpi_module_abi.  tmpi-launch reads the section before submitting; tmpid checks the symbol
 * after loading. */
#ifndef TMPI_MODULE_MARKER_H
#define TMPI_MODULE_MARKER_H

#define TMPI_MODULE_SECTION ".tmpi_module"
#define TMPI_MODULE_MAGIC "TMPI-MODULE 1"
#define TMPI_MODULE_SYMBOL "tmpi_module_abi"

#endif
