mod catalog;
