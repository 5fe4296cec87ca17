/* placeholder: being written */
typedef int pelab_placeholder_t;
