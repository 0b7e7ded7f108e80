mod boundary;
