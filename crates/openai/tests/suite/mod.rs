mod adapter;
